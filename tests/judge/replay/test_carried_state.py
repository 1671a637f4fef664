"""State a plan carries from call to call (docs/threat-model.md #29): a repeat trial makes a run of
calls with state carried, of a length drawn from the verdict's seed, before its checked call on fresh
inputs, then reruns its first inputs with every constant an earlier call changed poisoned
(``PlanRunner.poison_changed``), so a count of calls kept in device memory reads as an arbitrary
number and a kernel armed to go wrong after some calls goes wrong in the judge; a counter a call
puts back (split-K arrival counts) and a workspace written before it is read are unaffected.
Stand-in kernels play the device code (``fakes.py``). The parent's message names the poisoned state
when a trial's rerun drifted from its first call."""

from __future__ import annotations

import json

import torch

from hawkeye_env.judge.parent.decide import checks
from hawkeye_env.judge.sandboxed.replay import replay
from hawkeye_env.judge.sandboxed.replay.replay import PlanRunner
from hawkeye_env.judge.shared import launch_plan
from hawkeye_env.judge.shared.inputs import fresh_seed, make_inputs
from hawkeye_env.judge.shared.verdict import Stage, Verdict
from hawkeye_env.tasks.registry import get_task, task_module
from tests.judge.replay.fakes import kernel_record

CPU = torch.device("cpu")
TASK = "vector_add_fp32"
WRONG_FROM_CALL = 100


def _ref(tid: int, n: int, dtype: str = "float32") -> dict:
    return {"T": tid, "dtype": dtype, "size": [n], "stride": [1], "offset": 0}


def _plan(n: int) -> dict:
    """``out = a + b`` through one launch that also reads and writes an int32 counter and a float32
    workspace, both made before the forward (constants, recorded as zeros)."""
    bases = [{"kind": "input", "index": 0, "nbytes": 4 * n}, {"kind": "input", "index": 1, "nbytes": 4 * n},
             {"kind": "const", "device": "cpu", "nbytes": 4, "data": bytes(4)},
             {"kind": "const", "device": "cpu", "nbytes": 4 * n, "data": bytes(4 * n)},
             {"kind": "op", "step": 0, "nbytes": 4 * n}]
    steps = [{"op": "aten::empty.memory_format", "args": [[n]], "kwargs": {"dtype": {"dtype": "float32"}},
              "outs": [4]},
             {"launch": 0, "grid": [1, 1, 1],
              "args": [_ref(0, n), _ref(1, n), _ref(2, 1, "int32"), _ref(3, n), _ref(4, n)]}]
    return {"bases": bases, "steps": steps, "outputs": [_ref(4, n)]}


def counting(grid, args):
    """Right for the first ``WRONG_FROM_CALL`` calls, then ``a`` alone."""
    a, b, calls, _, out = args
    out.copy_(a if int(calls[0]) >= WRONG_FROM_CALL else a + b)
    calls.add_(1)


def arrivals(grid, args):
    """Raises its counter and puts it back, as ``fused_reduce``'s arrival counts do."""
    a, b, calls, _, out = args
    calls.add_(3)
    out.copy_(a + b)
    calls.sub_(3)


def workspace(grid, args):
    """Writes its workspace before it reads it."""
    a, b, _, scratch, out = args
    scratch.copy_(a + b)
    out.copy_(scratch)


def _runner(kernel, n: int = 8) -> PlanRunner:
    return PlanRunner(_plan(n), [kernel], {}, CPU, raw_pointers=False, poison_seed=5)


def test_a_count_kept_in_a_constant_reads_as_an_arbitrary_number_on_the_next_call():
    runner = _runner(counting)
    a, b = torch.randn(8), torch.randn(8)
    assert torch.equal(runner(a, b)[0], a + b)
    assert runner.poison_changed() == [2]
    count = int(torch.empty(0, dtype=torch.int32).set_(runner.fixed[2])[0])
    assert count >= WRONG_FROM_CALL, count
    assert torch.equal(runner(a, b)[0], a)


def test_a_counter_put_back_and_a_workspace_written_first_keep_their_outputs():
    a, b = torch.randn(8), torch.randn(8)
    runner = _runner(arrivals)
    assert torch.equal(runner(a, b)[0], a + b)
    assert runner.poison_changed() == []
    assert torch.equal(runner(a, b)[0], a + b)
    runner = _runner(workspace)
    assert torch.equal(runner(a, b)[0], a + b)
    assert runner.poison_changed() == [3]
    assert torch.equal(runner(a, b)[0], a + b)


def test_the_poison_is_drawn_from_the_runners_seed():
    a, b = torch.randn(8), torch.randn(8)
    drawn = []
    for seed in (5, 5, 6):
        runner = PlanRunner(_plan(8), [workspace], {}, CPU, raw_pointers=False, poison_seed=seed)
        runner(a, b)
        runner.poison_changed()
        drawn.append(torch.empty(0, dtype=torch.uint8).set_(runner.fixed[3]).clone())
    assert torch.equal(drawn[0], drawn[1]) and not torch.equal(drawn[0], drawn[2])
    assert int(drawn[0].max()) <= 127


def _replayed(monkeypatch, tmp_path, kernel, trial: dict, warm: bool = True) -> dict:
    """``run_replay`` on CPU with ``kernel`` standing in for the plan's compiled kernel, recorded
    as a model's first forward and (``warm``) as its second; the process-wide settings it changes
    are put back after the test."""
    monkeypatch.setattr(replay, "loader", lambda kernels, cuda: lambda entries, folder: [kernel])
    monkeypatch.setattr(torch.utils.deterministic, "fill_uninitialized_memory",
                        torch.utils.deterministic.fill_uninitialized_memory)
    n = trial["shape"]["N"]
    signature = ["*fp32", "*fp32", "*i32", "*fp32", "*fp32"]
    job = {"kind": "replay", "task": TASK, "device": "cpu", "trials": [trial], "timing": None,
           "plans": launch_plan.to_job([{"shape": trial["shape"], "plan": _plan(n), "warm": second,
                                         "kernels": [kernel_record("k", signature)]}
                                        for second in (False, True)[:1 + warm]]),
           "task_dirs": [], "workdir": str(tmp_path)}
    with torch.enable_grad():
        return replay.run_replay(json.loads(json.dumps(job)))


def windowed(grid, args):
    """Wrong (``a`` alone) only when its count reads 3: the 4th call made with its own state."""
    a, b, calls, _, out = args
    out.copy_(a if int(calls[0]) == 3 else a + b)
    calls.add_(1)


def test_a_trials_repeated_calls_carry_state_then_find_it_poisoned(monkeypatch, tmp_path):
    """The repeat trial's first call, its ``carried`` unchecked calls and its call on fresh inputs
    find the count its earlier calls left; its rerun of the first inputs comes last and finds it
    poisoned (the 100th-call answer), although the plan ran at most four times. A count wrong only
    on the 4th call is caught on fresh inputs when two calls are carried, and not with none."""
    shape = dict(get_task(TASK).cpu_shapes[0])
    trial = {"shape": shape, "distribution": "normal", "seed": 11, "order": "candidate_first", "layout": None,
             "rerun": True, "carried": 0}
    task = task_module(get_task(TASK))
    a, b = make_inputs(task, shape, "normal", 11, "cpu")
    fa, fb = make_inputs(task, shape, "normal", fresh_seed(11), "cpu")
    reply = _replayed(monkeypatch, tmp_path, counting, trial)
    assert reply["stage"] == "ok", reply["error"]
    row = reply["trials"][0]
    assert torch.equal(row["outputs"][0], a + b) and torch.equal(row["fresh"]["outputs"][0], fa + fb)
    assert torch.equal(row["rerun"][0], a)
    honest = _replayed(monkeypatch, tmp_path, arrivals, trial)["trials"][0]
    assert torch.equal(honest["rerun"][0], a + b)
    for carried, wrong in ((0, False), (2, True)):
        row = _replayed(monkeypatch, tmp_path, windowed, dict(trial, carried=carried))["trials"][0]
        assert torch.equal(row["fresh"]["outputs"][0], fa if wrong else fa + fb), carried
        assert torch.equal(row["outputs"][0], a + b) and torch.equal(row["rerun"][0], a + b)


def test_the_message_names_carried_state_only_when_the_rerun_drifted():
    """A trial whose call on fresh inputs fails is told about the poisoned constants only when its
    rerun on the same inputs gave other bytes than its first call (state kept between calls)."""
    spec = get_task(TASK)
    a = torch.randn(1000, dtype=torch.float64)
    fresh = torch.randn(1000, dtype=torch.float64)
    plan = [{"shape": {"N": 1000}, "distribution": "normal", "order": "candidate_first", "rerun": True}]
    for rerun, named in ((a, False), (a + 1.0, True)):
        row = {"outputs": [a.float()], "reference": [a], "native": [a.float()], "rerun": [rerun.float()],
               "fresh": {"outputs": [(fresh + 1.0).float()], "reference": [fresh], "native": [fresh.float()]}}
        v = Verdict(task=TASK, device="cpu", stage=Stage.CORRECT, source_hash="0" * 64, versions={})
        assert not checks.check_trials(spec, plan, [row], v, "cpu")
        assert v.stage is Stage.INCORRECT and "fresh inputs" in v.error
        assert (checks.CARRIED_STATE in v.error) is named, v.error


def test_the_carried_run_is_drawn_from_the_seed_log_uniform_below_its_span():
    """The repeat trial's run of unchecked calls (``trial_plan.carried_calls``): its length depends
    on the verdict's seed alone, and its checked call is the ``n``-th with ``P(n >= m) = 1 -
    log(m - 1) / log(span)``: every length below the span occurs, at about that rate."""
    import math

    from hawkeye_env.judge.parent.trial_plan import CARRIED_SPAN, carried_calls, plan_trials

    spec = get_task(TASK)
    for device in ("cpu", "cuda"):
        span, draws = CARRIED_SPAN[device], [carried_calls(device, s) for s in range(4000)]
        assert set(draws) == set(range(span - 1))
        for m in (3, span // 2 + 1):  # the checked call is the (k + 2)-th: first, k carried, fresh
            share = sum(k + 2 >= m for k in draws) / len(draws)
            assert abs(share - (1 - math.log(m - 1) / math.log(span))) < 0.03, (device, m, share)
    trials = plan_trials(spec, "cpu", 7)
    assert trials[-1]["carried"] == carried_calls("cpu", 7) and all("carried" not in t for t in trials[:-1])


def test_the_carried_run_stops_at_its_time_budget(monkeypatch, tmp_path):
    """Past ``CARRIED_BUDGET_S`` the run makes no more calls and the checked call comes: with the
    budget spent at once, a run of two drawn calls leaves the window kernel's count at 1."""
    from hawkeye_env.judge.shared import inputs

    shape = dict(get_task(TASK).cpu_shapes[0])
    trial = {"shape": shape, "distribution": "normal", "seed": 11, "order": "candidate_first", "layout": None,
             "rerun": True, "carried": 2}
    fa, fb = make_inputs(task_module(get_task(TASK)), shape, "normal", fresh_seed(11), "cpu")
    monkeypatch.setattr(inputs, "CARRIED_BUDGET_S", -1.0)
    row = _replayed(monkeypatch, tmp_path, windowed, trial)["trials"][0]
    assert torch.equal(row["fresh"]["outputs"][0], fa + fb)


def test_the_repeat_trial_replays_a_models_second_forward(monkeypatch, tmp_path):
    """The repeat trial runs the plan recorded as a model's second forward (a buffer its first
    forward made and kept is a constant there, carried and poisoned); every other trial runs the
    first forward's plan; a repeat trial with no second-forward plan does not replay."""
    shape = dict(get_task(TASK).cpu_shapes[0])
    trial = {"shape": shape, "distribution": "normal", "seed": 11, "order": "candidate_first", "layout": None}
    picked = []
    real = replay._Replay.runner

    def runner(self, *args, warm=False, **kwargs):
        picked.append(warm)
        return real(self, *args, warm=warm, **kwargs)

    monkeypatch.setattr(replay._Replay, "runner", runner)
    assert _replayed(monkeypatch, tmp_path, arrivals, trial)["stage"] == "ok" and picked == [False]
    reply = _replayed(monkeypatch, tmp_path, arrivals, dict(trial, rerun=True, carried=1))
    assert reply["stage"] == "ok" and picked[1:] == [True]
    reply = _replayed(monkeypatch, tmp_path, arrivals, dict(trial, rerun=True, carried=1), warm=False)
    assert reply["stage"] == "runtime_error" and "no second-forward plan" in reply["error"]

