"""Plans and recording replies a candidate that took over its worker could write, each against the
defence that must hold: the parent's validation refuses it with its reason and never raises or
hangs (``plan_check.plan_problem``, ``reply_check``, ``replayed.record_and_replay``), the replay
raises ``PlanError`` or gives the candidate's own ``runtime_error`` (``replay.PlanRunner``,
``run_replay``), or the outputs it gets cannot pass the parent's correctness check.

Values reach the parent as ``torch.load(weights_only=True)`` decodes them: sets, bytes, tuples,
devices, tensors, integers past the float range, cyclic lists and lists shared through the
pickle's memo all arrive (``test_the_unpickler_carries_what_json_cannot``), and a hand-written
pickle nests as deep as its length allows (``torch.save`` itself cannot write that deep, so
those values are built here after the round trip)."""

from __future__ import annotations

import io
import json
import time

import pytest
import torch

from hawkeye_env.judge.parent.decide import checks
from hawkeye_env.judge.parent.decide.references import trial_references
from hawkeye_env.judge.parent.launch import run_job
from hawkeye_env.judge.parent.validate import plan_check, reply_check
from hawkeye_env.judge.sandboxed.replay import replay
from hawkeye_env.judge.sandboxed.replay.replay import PlanError, PlanRunner
from hawkeye_env.judge.shared import launch_plan
from hawkeye_env.judge.shared.inputs import make_inputs
from hawkeye_env.judge.shared.verdict import Stage, Verdict
from hawkeye_env.tasks.registry import get_task, task_module
from hawkeye_env.tasks.spec import ALLOCATION_AND_VIEW_OPS
from tests.judge.replay.fakes import elf, kernel_record
from tests.judge.replay.test_launch_plan import launch_step, recorded
from tests.judge.replay.test_replayed import TRIALS, honest_plans, record_reply
from tests.judge.replay.test_replayed import run as record_and_replay_with

CPU = torch.device("cpu")
TASK = "vector_add_fp32"
NOOP = [lambda grid, args: None]


def decoded(x):
    """``x`` as the parent gets it from a worker: pickled by ``torch.save``, read back with
    ``torch.load(weights_only=True)``."""
    buf = io.BytesIO()
    torch.save(x, buf)
    return torch.load(io.BytesIO(buf.getvalue()), weights_only=True)


def problem(plan, kernels) -> str | None:
    return plan_check.plan_problem(plan, kernels, ALLOCATION_AND_VIEW_OPS)


def nested(depth: int):
    v: list = []
    for _ in range(depth):
        v = [v]
    return v


def cyclic():
    v: list = []
    v.append(v)
    return v


def ref(tid: int, size=(4,), stride=(1,), offset=0, dtype="float32") -> dict:
    return {"T": tid, "dtype": dtype, "size": list(size), "stride": list(stride), "offset": offset}


def op(name: str, args: list, outs: list, **kwargs) -> dict:
    return {"op": name, "args": args, "kwargs": kwargs, "outs": outs}


LAUNCH = {"launch": 0, "grid": [1, 1, 1], "args": []}
KERNELS = [kernel_record("k", [])]
INPUT = {"kind": "input", "index": 0, "nbytes": 16}


# -- the parent's validation: refused with a reason, never an exception ----------------------

def _edited(edit):
    plan, kernels = decoded(recorded())
    edit(plan, kernels)
    return plan, kernels


def test_the_unpickler_carries_what_json_cannot():
    shared = [1]
    got = decoded({"cycle": cyclic(), "shared": [shared, shared], "set": {1, 2}, "bytes": b"x",
                   "tuple": (1,), "device": torch.device("cuda"), "big": 10**400, (1, 2): torch.zeros(1)})
    assert got["cycle"][0] is got["cycle"] and got["shared"][0] is got["shared"][1]
    assert got["set"] == {1, 2} and got["big"] == 10**400 and isinstance(got["device"], torch.device)
    assert (1, 2) in got


@pytest.mark.parametrize("edit, reason", [
    (lambda p, k: launch_step(p)["args"][0].__setitem__("dtype", ["float32"]), "unknown dtype a list"),
    (lambda p, k: p["steps"][0]["kwargs"].__setitem__("dtype", {"dtype": {"float32"}}), "unknown dtype a set"),
    (lambda p, k: p["steps"][0]["kwargs"].__setitem__("device", {"device": torch.device("cuda")}),
     "unknown device a device"),
    (lambda p, k: p["steps"][0]["kwargs"].__setitem__("memory_format", {"memory_format": []}), "memory format"),
    (lambda p, k: p["steps"][0]["kwargs"].__setitem__("layout", {"layout": {}}), "layout"),
    (lambda p, k: p["bases"].append({"kind": "const", "device": ["cuda"], "nbytes": 0, "data": bytearray()}),
     "bad constant base"),
    (lambda p, k: p["bases"].append({"kind": nested(5000), "nbytes": 0}), "unknown kind a list"),
    (lambda p, k: launch_step(p)["args"][0].__setitem__("T", nested(5000)), "names base a list"),
    (lambda p, k: k[0]["signature"].__setitem__(0, nested(5000)), "unsupported argument type a list"),
    (lambda p, k: p["steps"][0]["kwargs"].__setitem__("x", {((),) * 3: 1}), "unknown value tag a tuple"),
    (lambda p, k: p["steps"][0]["kwargs"].__setitem__("x", {torch.tensor([1, 2]): 1}), "unknown value tag a Tensor"),
    (lambda p, k: p["steps"][0]["kwargs"].__setitem__("x", cyclic()), "nested too deeply"),
    (lambda p, k: p["steps"][0]["args"].append(nested(5000)), "nested too deeply"),
    (lambda p, k: k[0].__setitem__("metadata", "[" * 30000 + "]" * 30000), "metadata is not JSON"),
    (lambda p, k: k[0].__setitem__("metadata", '{"a": ' * 9000 + "1" + "}" * 9000), "metadata is not JSON"),
])
def test_values_that_would_break_the_validation_itself_are_refused(edit, reason):
    """Unhashable names, deep and cyclic values, deep metadata JSON: each used to raise in the
    trusted parent (TypeError, RecursionError), a ``judge_error`` that is paid as a runtime
    error and judged again."""
    found = problem(*_edited(edit))
    assert found is not None and reason in found, found


@pytest.mark.parametrize("value", [b"bytes", (1, 2), {1, 2}, 1j, torch.float32, torch.device("cuda"),
                                   torch.Size([4]), torch.zeros(2), bytearray(b"x")])
def test_no_value_the_replay_job_cannot_carry_passes(value):
    """Whatever a pickle can carry that JSON cannot is refused where it stands in the plan, so
    the replay job the parent writes (``json.dumps``) never fails on it."""
    places = [
        lambda p, k: p["steps"][0]["args"].append(value),
        lambda p, k: p["steps"][0]["kwargs"].__setitem__("x", value),
        lambda p, k: launch_step(p)["args"].__setitem__(3, value),
        lambda p, k: launch_step(p)["grid"].__setitem__(0, value),
        lambda p, k: launch_step(p)["args"][0].__setitem__("size", value),
        lambda p, k: p["steps"][0]["outs"].__setitem__(0, value),
        lambda p, k: p["outputs"].__setitem__(0, value),
        lambda p, k: p["bases"][1].__setitem__("key", value),
        lambda p, k: p["bases"][0].__setitem__("index", value),
    ]
    for place in places:
        if value is not None and isinstance(value, (bytes, bytearray)) and place is places[5]:
            continue
        assert problem(*_edited(place)) is not None, (place, value)


def test_what_passes_the_validation_is_json_for_the_replay_job():
    """Integers past 2**63 and non-finite floats are valid JSON; the replay refuses them where
    they do not fit (a launcher argument, a storage offset)."""
    plan, kernels = _edited(lambda p, k: (launch_step(p)["args"].__setitem__(3, 2**200),
                                          p["steps"][0]["kwargs"].__setitem__("fill", float("nan"))))
    assert problem(plan, kernels) is None
    back = launch_plan.from_job(json.loads(json.dumps(launch_plan.to_job([{"shape": {}, "plan": plan,
                                                                          "kernels": kernels}]))))
    assert launch_step(back[0]["plan"])["args"][3] == 2**200


def test_a_memo_bomb_is_refused_at_once():
    """Lists shared through the pickle's memo: 9 kB on the wire, 512**8 values to walk (an
    endless validation in the trusted parent) and as many to write into the replay's JSON."""
    bomb = 0
    for _ in range(8):
        bomb = [bomb] * 512
    plan, kernels = recorded()
    plan["steps"][0]["kwargs"]["x"] = bomb
    plan, kernels = decoded(plan), decoded(kernels)
    started = time.monotonic()
    found = problem(plan, kernels)
    assert found is not None and f"more than {launch_plan.MAX_VALUES} values" in found
    assert time.monotonic() - started < 2.0


def test_many_steps_sharing_one_wide_value_are_bounded_too():
    plan, kernels = recorded()
    wide = [[1] * 500] * 500
    plan["steps"] = [op("aten::zeros", [[4]], [None], x=wide) for _ in range(4000)] + plan["steps"]
    plan, kernels = decoded((plan, kernels))  # the pickle round trip is the test's, not the check's
    started = time.monotonic()
    found = problem(plan, kernels)
    assert found is not None and "values" in found and time.monotonic() - started < 2.0


def test_the_outputs_list_and_kwargs_are_bounded():
    assert "no outputs, or more than" in problem(*_edited(lambda p, k: p["outputs"].extend(p["outputs"] * 600)))
    found = problem(*_edited(lambda p, k: p["steps"][0]["kwargs"].update({f"k{i}": 0 for i in range(600)})))
    assert "keyword names" in found


def test_shared_cubins_are_bounded_in_all():
    """One 16 MiB cubin named by 64 kernels is 16 MiB on the wire and 1.4 GB of replay job."""
    cubin = elf([".text.k"]) + bytes(launch_plan.MAX_CUBIN_BYTES - len(elf([".text.k"])))
    assert plan_check.cubin_problem(cubin) is None
    plan, kernels = recorded()
    kernels = [{**kernels[0], "cubin": cubin} for _ in range(5)]
    assert "bytes in all" in problem(plan, kernels)


@pytest.mark.parametrize("name", ["aten::view.__setattr__", "aten::empty.__init__", "aten::t._op",
                                  "aten::empty.__call__", "aten::fill_.__class__"])
def test_an_attribute_of_an_op_packet_is_not_an_op(name):
    """``aten::view.__setattr__`` resolved to the packet's ``__setattr__``: the replay set
    ``torch.ops.aten.view._op`` to a string of the plan's choosing."""
    plan, kernels = recorded()
    plan["steps"].insert(0, op(name, ["_op", "x"], []))
    assert "not an aten operator name" in problem(plan, kernels)
    unchecked = {"bases": [], "steps": [op(name, ["_op", "x"], []), LAUNCH], "outputs": []}
    with pytest.raises(PlanError, match="not an aten operator"):
        PlanRunner(unchecked, NOOP, {}, CPU)
    assert isinstance(torch.ops.aten.view._op, type(torch.ops.aten.t._op))


@pytest.mark.parametrize("name", ["aten::set_.source_Storage", "aten::copy_", "aten::as_strided_",
                                  "aten::resize_", "aten::_local_scalar_dense", "aten::index_put_", "aten::mm"])
def test_ops_outside_the_allowlist_are_refused_whatever_the_overload(name):
    plan, kernels = recorded()
    plan["steps"].insert(0, op(name, [], []))
    found = problem(plan, kernels)
    assert "outside the task's allowed ops" in found or "reads device data on the host" in found


# -- the replay: a plan that reaches outside what it names fails as the candidate's -----------

def test_a_zero_dim_reference_past_its_storage_is_a_plan_error_and_grows_nothing():
    """``set_`` grows a storage to fit a view: a 0-dim reference at offset 100 of a 16-byte
    input read heap memory past it and grew the input's storage (a later call then found it
    404 bytes long)."""
    x = torch.arange(4.0)
    plan = {"bases": [INPUT], "steps": [LAUNCH], "outputs": [ref(0, size=(), stride=(), offset=100)]}
    assert problem(plan, KERNELS) is None
    with pytest.raises(PlanError, match="reaches byte 404 of a 16-byte storage"):
        PlanRunner(plan, NOOP, {}, CPU, raw_pointers=False)(x)
    assert x.untyped_storage().nbytes() == 16


@pytest.mark.parametrize("args, match", [
    ([ref(0), [100], [1], 0], "out of bounds for storage"),
    ([ref(0), [2], [-1], 3], "Negative strides"),
    ([ref(0), [2], [1], 2**40], "out of bounds for storage"),
])
def test_as_strided_cannot_reach_past_its_storage(args, match):
    x = torch.arange(4.0)
    plan = {"bases": [INPUT], "steps": [op("aten::as_strided", args, [1]), LAUNCH], "outputs": [ref(0)]}
    with pytest.raises(RuntimeError, match=match):
        PlanRunner(plan, NOOP, {}, CPU, raw_pointers=False)(x)
    assert x.untyped_storage().nbytes() == 16


def test_a_view_nothing_reads_is_skipped_and_a_mutating_op_is_not():
    """Steps that change nothing and whose outputs no step reads are not run (their host time is
    not the plan's); an in-place op with no new output still runs."""
    x = torch.arange(4.0)
    view = op("aten::as_strided", [ref(0), [100], [1], 0], [None])
    zero = op("aten::zero_", [ref(0)], [None])
    plan = {"bases": [INPUT], "steps": [view, zero, LAUNCH], "outputs": [ref(0)]}
    runner = PlanRunner(plan, NOOP, {}, CPU, raw_pointers=False)
    assert len(runner.program) == 2
    assert torch.equal(runner(x)[0], torch.zeros(4))


def test_a_reference_past_a_parameter_or_with_negative_strides_is_a_plan_error():
    param = {"kind": "param", "key": "w", "nbytes": 16, "dtype": "float32", "size": [4], "stride": [1], "offset": 0}
    for bad in (ref(1, offset=1), ref(1, size=(2,), stride=(-1,), offset=3), ref(1, size=(2, 2), stride=(2**40, 1))):
        plan = {"bases": [INPUT, param], "steps": [LAUNCH], "outputs": [bad]}
        with pytest.raises(PlanError, match="reaches byte|negative stride"):
            PlanRunner(plan, NOOP, {"w": torch.ones(4)}, CPU, raw_pointers=False)(torch.zeros(4))


@pytest.mark.parametrize("steps, match", [
    ([op("aten::split.Tensor", [ref(0), 2], [1]), LAUNCH], "returned 2 values, the plan 1"),
    ([op("aten::size.int", [ref(0), 0], [1]), LAUNCH], "returned a int where the plan has a tensor"),
])
def test_outs_that_do_not_fit_what_the_op_returns_are_a_plan_error(steps, match):
    plan = {"bases": [INPUT, {"kind": "op", "step": 0, "nbytes": 8}], "steps": steps, "outputs": [ref(0)]}
    assert problem(plan, KERNELS) is None
    with pytest.raises(PlanError, match=match):
        PlanRunner(plan, NOOP, {}, CPU, raw_pointers=False)(torch.zeros(4))


def test_an_op_base_that_is_really_a_parameter_only_spoils_the_candidates_own_calls():
    """A plan that says ``alias(w)`` makes a new storage: the scrub between timed calls then NaNs
    the runner's copy of ``w`` (its next outputs are wrong), never the reference's weights."""
    w = torch.ones(4)
    param = {"kind": "param", "key": "w", "nbytes": 16, "dtype": "float32", "size": [4], "stride": [1], "offset": 0}
    plan = {"bases": [INPUT, param, {"kind": "op", "step": 0, "nbytes": 16}],
            "steps": [op("aten::alias", [ref(1)], [2]), LAUNCH], "outputs": [ref(2)]}
    assert problem(plan, KERNELS) is None
    runner = PlanRunner(plan, NOOP, {"w": w}, CPU, raw_pointers=False)
    assert torch.equal(runner(torch.zeros(4))[0], w)
    runner.reset()
    assert runner(torch.zeros(4))[0].isnan().all() and torch.equal(w, torch.ones(4))


# -- outputs that are not the work: the parent's correctness check fails them -----------------

def _replayed_rows(monkeypatch, tmp_path, plan, kernels, trials):
    """``run_replay`` on CPU with no-op stand-ins for the kernels: the reply's trial rows."""
    init = replay._Replay.__init__

    def with_stand_ins(self, job, folder):
        init(self, job, folder)
        self.launches = [NOOP * len(e["kernels"]) for e in self.entries]

    monkeypatch.setattr(replay._Replay, "__init__", with_stand_ins)
    shapes = [t["shape"] for t in trials]
    job = {"kind": "replay", "task": TASK, "device": "cpu", "trials": trials, "timing": None,
           "plans": launch_plan.to_job([{"shape": s, "plan": plan, "kernels": kernels} for s in shapes[:1]]),
           "task_dirs": [], "workdir": str(tmp_path)}
    grad, fill = torch.is_grad_enabled(), torch.utils.deterministic.fill_uninitialized_memory
    try:
        return replay.run_replay(json.loads(json.dumps(job)))
    finally:
        torch.set_grad_enabled(grad)
        torch.utils.deterministic.fill_uninitialized_memory = fill


def _parent_check(trials, reply) -> Verdict:
    spec = get_task(TASK)
    for t, row in zip(trials, reply["trials"]):
        got = trial_references(spec, t, "cpu")
        row["reference"], row["native"] = got.reference, got.native
    v = Verdict(task=TASK, device="cpu", stage=Stage.CORRECT, source_hash="0" * 64, versions={})
    assert not checks.check_trials(spec, trials, reply["trials"], v, "cpu")
    return v


def _trial(seed: int) -> dict:
    return {"shape": dict(get_task(TASK).cpu_shapes[0]), "distribution": "normal", "seed": seed,
            "order": "candidate_first"}


def test_a_constant_holding_the_recorded_answer_is_wrong_on_the_replays_inputs(monkeypatch, tmp_path):
    """The worker saw its recording inputs and can ship their answer as a constant; the replay's
    trial inputs come from seeds the worker never saw."""
    task, trial = task_module(get_task(TASK)), _trial(7)
    x, y = make_inputs(task, trial["shape"], "normal", 12345, "cpu")
    answer = (x + y).numpy().tobytes()
    n = x.untyped_storage().nbytes()
    plan = {"bases": [{"kind": "const", "device": "cpu", "nbytes": n, "data": answer}], "steps": [LAUNCH],
            "outputs": [ref(0, size=x.shape, stride=x.stride())]}
    assert problem(plan, KERNELS) is None
    reply = _replayed_rows(monkeypatch, tmp_path, plan, KERNELS, [trial])
    assert reply["stage"] == "ok", reply["error"]
    assert _parent_check([trial], reply).stage is Stage.INCORRECT


def test_returning_an_input_is_caught_by_the_correctness_check(monkeypatch, tmp_path):
    trial = _trial(8)
    n = trial["shape"]["N"]
    plan = {"bases": [{"kind": "input", "index": 0, "nbytes": 4 * n}], "steps": [LAUNCH],
            "outputs": [ref(0, size=(n,))]}
    reply = _replayed_rows(monkeypatch, tmp_path, plan, KERNELS, [trial])
    assert reply["stage"] == "ok", reply["error"]
    assert torch.equal(reply["trials"][0]["outputs"][0], make_inputs(task_module(get_task(TASK)), trial["shape"],
                                                                      "normal", 8, "cpu")[0])
    assert _parent_check([trial], reply).stage is Stage.INCORRECT


@pytest.mark.parametrize("step, fragment", [
    (op("aten::empty.memory_format", [[2**62]], [0]), "candidate's kernels failed"),
    (op("aten::empty.memory_format", [[4]], [0], dtype="not a dtype"), "candidate's kernels failed"),
    (op("aten::zeros", ["four"], [0]), "candidate's kernels failed"),
])
def test_an_op_the_replay_cannot_run_is_the_candidates_runtime_error(monkeypatch, tmp_path, step, fragment):
    """Huge allocations, strings where torch wants numbers or a dtype: the replay replies
    ``runtime_error`` (it never raises), no trial rows."""
    plan = {"bases": [{"kind": "op", "step": 0, "nbytes": 16}], "steps": [step, LAUNCH], "outputs": [ref(0)]}
    assert problem(plan, KERNELS) is None
    reply = _replayed_rows(monkeypatch, tmp_path, plan, KERNELS, [_trial(9)])
    assert reply["stage"] == "runtime_error" and fragment in reply["error"] and reply["trials"] == []


def test_a_dunder_overload_in_the_replay_job_is_a_plan_error(monkeypatch, tmp_path):
    plan = {"bases": [], "steps": [op("aten::view.__setattr__", ["_op", "x"], []), LAUNCH], "outputs": []}
    reply = _replayed_rows(monkeypatch, tmp_path, plan, KERNELS, [_trial(10)])
    assert reply["stage"] == "runtime_error" and "not an aten operator" in reply["error"]
    assert callable(torch.ops.aten.view._op)


# -- the parent's orchestration: forged recording replies cost the candidate, never the judge --

def processes(sent: list) -> list:
    """The processes ``record_and_replay`` started (not the standby it primed)."""
    return [s for s in sent if s[0] != "primed"]


@pytest.mark.parametrize("edit, fragment", [
    (lambda r: r.update(profile={"load_s": 10**400}), "profile"),
    (lambda r: r.update(profile={"load_s": -(10**400)}), "profile"),
    (lambda r: r.update(stage=nested(5000)), "unknown stage (a list)"),
    (lambda r: r.update(stage=torch.tensor([1, 2])), "unknown stage (a Tensor)"),
])
def test_a_recording_reply_that_broke_the_parent_is_a_forged_reply(monkeypatch, edit, fragment):
    """An integer past the float range in the profile raised OverflowError (``math.isfinite``,
    then ``float``), a deeply nested stage RecursionError: a ``judge_error``, paid -0.5 where a
    forged reply is paid -1, and never stored."""
    reply = decoded(record_reply(honest_plans()))
    edit(reply)
    out, v, sent = record_and_replay_with(monkeypatch, reply)
    assert out is None and len(processes(sent)) == 1
    assert v.stage is Stage.REJECTED and v.violations[0].code == "forged_reply" and fragment in v.violations[0].message
    assert not any(k.startswith("worker.load") for k in v.profile)


def test_a_plan_that_raises_in_its_validation_is_the_candidates_invalid_plan(monkeypatch):
    """Whatever validation misses and raises on is the candidate's data, so its failure."""
    monkeypatch.setattr(plan_check, "plan_problem", lambda *a: 1 / 0)
    out, v, sent = record_and_replay_with(monkeypatch, record_reply(honest_plans()))
    assert out is None and len(processes(sent)) == 1
    assert v.stage is Stage.REJECTED and v.violations[0].code == "invalid_plan"
    assert "breaks its validation (ZeroDivisionError)" in v.violations[0].message


def test_a_memo_bomb_in_a_recording_reply_is_refused_before_any_replay(monkeypatch):
    bomb = 0
    for _ in range(8):
        bomb = [bomb] * 512
    plans = honest_plans()
    plans[0]["plan"]["steps"][0]["kwargs"]["x"] = bomb
    started = time.monotonic()
    out, v, sent = record_and_replay_with(monkeypatch, decoded(record_reply(plans)))
    assert out is None and len(processes(sent)) == 1 and time.monotonic() - started < 2.0
    assert v.violations[0].code == "invalid_plan" and "values" in v.violations[0].message


@pytest.mark.parametrize("kept", [
    [{"refills": 1, "outputs": []}, {"refills": "2", "outputs": []}],
    [{"refills": torch.tensor([1, 2]), "outputs": []}, {"refills": 2, "outputs": []}],
    [{"refills": nested(5000), "outputs": []}],
])
def test_kept_iterations_of_any_type_are_refused_not_sorted(kept):
    """Sorting the kept refill counts before checking their type raised TypeError (mixed types)
    or a tensor's ambiguous truth value."""
    timing = {"candidate": {"median_ms": 1.0, "attempts": 1, "kept": kept}}
    found = reply_check._timing_problem({"seed": 1, "iters": 5, "retries": 0}, timing)
    assert found is not None and "kept iteration at refill" in found


@pytest.mark.parametrize("bad", [10**400, -(10**400), float("inf"), float("nan"), True])
def test_times_past_the_float_range_are_not_finite(bad):
    assert not reply_check._finite(bad, False)
    timing = {"candidate": {"median_ms": bad, "attempts": 1}}
    assert "not a finite positive number" in reply_check._timing_problem({"seed": 1, "iters": 5, "retries": 0},
                                                                         timing)


def test_a_progress_report_with_uniterable_violations_is_the_candidates_bad_reply():
    import socket
    import threading
    from multiprocessing.connection import Connection

    from hawkeye_env.judge.sandboxed.common.serve_loop import send

    parent_sock, child_sock = socket.socketpair()
    parent, child = Connection(parent_sock.detach()), Connection(child_sock.detach())

    class Proc:
        pid, exitcode, scratch = 0, 0, None

        def is_alive(self):
            return True

        def kill(self):
            pass

        def join(self, timeout=None):
            pass

    def worker():
        child.recv_bytes()
        try:
            send(child, {"kind": "progress", "violations": 5})
            send(child, {"kind": "final", "stage": "ok"})
        except OSError:
            pass

    threading.Thread(target=worker, daemon=True).start()
    outcome = run_job._watch(parent, Proc(), None, {"device": "cpu"}, 10.0, 0, None)
    assert outcome.reply is None and outcome.failure == "bad_reply"


def test_an_empty_tensor_made_before_the_forward_survives_the_reply():
    """A dummy pointer argument (``torch.empty(0)`` made in ``__init__``, the usual stand-in for
    an absent bias) is a 0-byte constant; an empty ``bytes`` could not be decoded by the parent,
    so the honest reply was a ``bad_reply``."""
    from hawkeye_env.judge.sandboxed.candidate.plan_recorder import PlanRecorder
    from tests.judge.replay.fakes import compiled_kernel

    dummy, x = torch.empty(0), torch.randn(4)
    with PlanRecorder([x], {}, device="cpu") as rec:
        out = torch.empty_like(x)
        rec.launch(compiled_kernel("k", ["*fp32", "*fp32", "*fp32"]), (1, 1, 1), (x, dummy, out))
    plan, kernels = decoded((rec.plan([out]), rec.kernels))
    assert problem(plan, kernels) is None and [b["kind"] for b in plan["bases"]] == ["input", "op", "const"]


def test_honest_plans_still_pass_and_replay(monkeypatch):
    """The bounds above leave the honest recorded plan and its orchestration as they were."""
    out, v, sent = record_and_replay_with(monkeypatch, decoded(record_reply(honest_plans())), replay=None)
    (_, record), (_, replayed_job) = processes(sent)
    assert "replay of the candidate's kernels failed" in v.error
    assert [t["shape"] for t in record["trials"]] == [{"N": 8}, {"N": 64}, {"N": 64}]
    assert [p["shape"] for p in replayed_job["plans"]] == [{"N": 8}, {"N": 64}, {"N": 64}]
    assert replayed_job["trials"] == TRIALS


_DEEP_KEY = """
import io, sys, zipfile, torch
buf = io.BytesIO()
torch.save({"kind": "final"}, buf)
head = b"\\x80\\x02}q\\x00(X\\x04\\x00\\x00\\x00kindq\\x01X\\x05\\x00\\x00\\x00finalq\\x02)"
pickled = head + b"\\x85" * 3_000_000 + b"K\\x01u."
src, out = zipfile.ZipFile(io.BytesIO(buf.getvalue())), io.BytesIO()
with zipfile.ZipFile(out, "w") as z:
    for info in src.infolist():
        z.writestr(info, pickled if info.filename.endswith("data.pkl") else src.read(info.filename))
from hawkeye_env.judge.parent.validate.reply_decode import decode_message
try:
    decode_message(out.getvalue())
except ValueError:
    sys.exit(0)
"""


def test_a_three_megabyte_message_cannot_crash_the_parent():
    """``{"kind": "final", ((((...),),),): 1}``: 3 MB of ``TUPLE1`` opcodes, any progress message
    or final reply of a worker."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _DEEP_KEY], capture_output=True, timeout=120)
    assert done.returncode == 0, done.returncode
