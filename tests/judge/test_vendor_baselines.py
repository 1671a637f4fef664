"""Vendor baselines in the judge: resolution, the unavailable path, caching, verdict and reward.

The worker-side helpers are driven in-process with fake vendor functions defined below (they are
imported by ``"tests.judge.test_vendor_baselines:<name>"``); the parent side with synthetic worker
replies. No GPU needed: nothing here reaches ``time_callable``'s CUDA timing except where a test
asserts that such a failure is reported.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from hawkeye_env.judge.parent import baselines
from hawkeye_env.judge.parent.decide.feedback import render_feedback
from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator
from hawkeye_env.judge.parent.launch import run_job
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.sandboxed.baseline import serve as baseline_worker
from hawkeye_env.judge.shared import baseline_names
from hawkeye_env.judge.shared.verdict import Stage, Verdict
from hawkeye_env.tasks.registry import get_task, solution_source
from hawkeye_env.tasks.spec import BaselineUnavailable
from reward import reward

HERE = "tests.judge.test_vendor_baselines"
GEMM = get_task("gemm_bf16")
SHAPE = dict(GEMM.gpu_shapes[0])
VERSIONS = {"gpu": "NVIDIA H200", "torch": "x"}
CALLS: list[str] = []


def fake_matmul(model, a, b):
    CALLS.append("fake_matmul")
    return torch.matmul(a, b) * 1.0


def fake_missing_library(model, a, b):
    raise BaselineUnavailable("fakelib is not installed")


def fake_broken(model, a, b):
    raise RuntimeError("kernel image mismatch")


class namespace:  # noqa: N801 - a dotted attribute path for resolve_vendor
    @staticmethod
    def nested(model, a, b):
        return a + 0


VENDOR_GEMM = dataclasses.replace(GEMM, vendor_baselines={
    "fakeblas": f"{HERE}:fake_matmul", "fakelib": f"{HERE}:fake_missing_library",
    "broken": f"{HERE}:fake_broken", "nolib": "hawkeye_no_such_module:fn",
})


def _small() -> tuple[torch.nn.Module, list[torch.Tensor]]:
    """A stand-in model (vendor fakes ignore it) and two small CPU matrices."""
    return torch.nn.Identity(), [torch.randn(4, 8), torch.randn(8, 3)]


# ---- worker side --------------------------------------------------------------------------------


def test_resolve_vendor_imports_module_function_and_dotted_attributes():
    assert baseline_worker.resolve_vendor(f"{HERE}:fake_matmul") is fake_matmul
    assert baseline_worker.resolve_vendor(f"{HERE}:namespace.nested") is namespace.nested
    for bad in ("no_colon", ":fn", "module:"):
        with pytest.raises(ValueError):
            baseline_worker.resolve_vendor(bad)


def test_prepare_vendor_calls_once_and_returns_a_callable_over_the_inputs():
    model, inputs = _small()
    CALLS.clear()
    fn, reason = baseline_worker.prepare_vendor(f"{HERE}:fake_matmul", model, inputs)
    assert reason == "" and CALLS == ["fake_matmul"]
    torch.testing.assert_close(fn(*inputs), inputs[0] @ inputs[1])
    assert CALLS == ["fake_matmul", "fake_matmul"]


@pytest.mark.parametrize("target, expected", [
    (f"{HERE}:fake_missing_library", "fakelib is not installed"),
    (f"{HERE}:fake_broken", "RuntimeError: kernel image mismatch"),
    ("hawkeye_no_such_module:fn", "ModuleNotFoundError: No module named 'hawkeye_no_such_module'"),
    (f"{HERE}:no_such_function", "AttributeError"),
])
def test_prepare_vendor_reports_unavailable_with_the_reason(target, expected):
    model, inputs = _small()
    fn, reason = baseline_worker.prepare_vendor(target, model, inputs)
    assert fn is None and expected in reason


def test_long_reasons_are_cut():
    reason = baseline_names.short_reason("x" * 5000)
    assert len(reason) == baseline_names.MAX_REASON_CHARS and reason.endswith("...")


def test_time_baselines_reports_unavailable_vendors_and_unknown_names_without_timing():
    model, inputs = _small()
    plan = {"baselines": ["fakelib", "broken", "nolib", "cudnn"], "iters": 3, "retries": 0, "seed": 0}
    got = baseline_worker.time_baselines(VENDOR_GEMM, model, inputs, plan)
    assert got["fakelib"] == {"unavailable": "fakelib is not installed"}
    assert got["broken"]["unavailable"].startswith("RuntimeError")
    assert "No module named" in got["nolib"]["unavailable"]
    assert "declares no baseline 'cudnn'" in got["cudnn"]["unavailable"]


@pytest.mark.skipif(torch.cuda.is_available(), reason="asserts what a timing failure does where CUDA is absent")
def test_a_judge_baseline_failure_raises_in_a_verdict_but_is_reported_in_a_baseline_job():
    model, inputs = _small()
    plan = {"baselines": ["eager"], "iters": 3, "retries": 0, "seed": 0}
    with pytest.raises(AssertionError):  # time_callable needs CUDA
        baseline_worker.time_baselines(VENDOR_GEMM, model, inputs, plan)
    got = baseline_worker.time_baselines(VENDOR_GEMM, model, inputs, plan, judge_errors_raise=False)
    assert got["eager"]["unavailable"].startswith("raised while timed: AssertionError")
    # a vendor baseline whose first call works but whose timing fails is reported, never raised
    got = baseline_worker.time_baselines(VENDOR_GEMM, model, inputs, {**plan, "baselines": ["fakeblas"]})
    assert got["fakeblas"]["unavailable"].startswith("raised while timed")


def test_a_baseline_job_compiles_under_the_shared_lock_and_times_under_the_exclusive_one(monkeypatch):
    events: list[str] = []

    def fake_compile(model):
        events.append("compile")
        return lambda *xs: events.append("compiled call") or model(*xs)

    def fake_time(spec, model, inputs, plan, judge_errors_raise=True, built=None):
        events.append(f"time {sorted(built or {})}")
        assert built["compile"] is not model  # the callable compiled ahead is the one timed
        return {"compile": {"median_ms": 1.0}}

    monkeypatch.setattr(torch, "compile", fake_compile)
    monkeypatch.setattr(baseline_worker, "time_baselines", fake_time)
    job = {"task": "vector_add_fp32", "device": "cpu", "shape": {"N": 16},
           "timing": {"baselines": ["eager", "compile"], "seed": 3}}
    got = baseline_worker.run_baseline_job(job, lane=lambda mode: events.append(f"lane {mode}"))
    assert got == {"compile": {"median_ms": 1.0}}
    assert events == ["compile", "compiled call", "lane exclusive", "time ['compile']", "lane none"]


def test_a_compile_that_raises_ahead_is_left_for_time_baselines_to_report(monkeypatch):
    def broken_compile(model):
        return lambda *xs: (_ for _ in ()).throw(RuntimeError("inductor failed"))

    monkeypatch.setattr(torch, "compile", broken_compile)
    model, inputs = _small()
    assert baseline_worker.compiled_ahead(model, inputs, ["eager", "compile"]) == {}
    assert baseline_worker.compiled_ahead(model, inputs, ["eager"]) == {}


def test_planned_appends_vendor_names_only_when_asked():
    assert baselines.planned(VENDOR_GEMM, ("eager", "compile"), False) == ["eager", "compile"]
    assert baselines.planned(VENDOR_GEMM, ("eager",), True) == ["eager", "fakeblas", "fakelib", "broken", "nolib"]
    clash = dataclasses.replace(GEMM, vendor_baselines={"eager": f"{HERE}:fake_matmul"})
    assert baselines.planned(clash, ("eager", "compile"), True) == ["eager", "compile"]


# ---- store --------------------------------------------------------------------------------------


def test_store_caches_unavailable_reasons_and_a_time_replaces_them():
    store = ResultStore(":memory:")
    assert store.get_unavailable_baselines("t", SHAPE, "cuda", VERSIONS) == {}
    store.put_unavailable_baseline("t", SHAPE, "cuda", VERSIONS, "fla", "no module fla")
    assert store.get_unavailable_baselines("t", SHAPE, "cuda", VERSIONS) == {"fla": "no module fla"}
    assert store.get_baselines("t", SHAPE, "cuda", VERSIONS) == {}
    assert store.get_unavailable_baselines("t", SHAPE, "cuda", {**VERSIONS, "torch": "y"}) == {}
    store.put_baseline("t", SHAPE, "cuda", VERSIONS, "fla", 0.5, {})
    assert store.get_unavailable_baselines("t", SHAPE, "cuda", VERSIONS) == {}
    store.put_unavailable_baseline("t", SHAPE, "cuda", VERSIONS, "fla", "gone again")
    assert store.get_baselines("t", SHAPE, "cuda", VERSIONS) == {}


def test_store_entry_never_caches_a_judge_baseline_failure():
    store = ResultStore(":memory:")
    baselines.store_entry(store, "t", SHAPE, "cuda", VERSIONS, "compile", {"unavailable": "inductor crashed"})
    baselines.store_entry(store, "t", SHAPE, "cuda", VERSIONS, "fla", {"unavailable": "no fla"})
    baselines.store_entry(store, "t", SHAPE, "cuda", VERSIONS, "eager", {"median_ms": 2.0, "cv": 0.01})
    got = baselines.cached_entries(store, "t", SHAPE, "cuda", VERSIONS, ["eager", "compile", "fla", "cublas"])
    assert got == {"eager": {"median_ms": 2.0, "cv": 0.01}, "fla": {"unavailable": "no fla"}}
    assert baselines.cached_entries(store, "t", SHAPE, "cuda", VERSIONS, ["eager"]) == {"eager": got["eager"]}


# ---- parent side: plan, verdict, feedback, reward -------------------------------------------------


def _planned_job(monkeypatch, store: ResultStore, config: EvalConfig) -> tuple[dict, list]:
    """The timing plan the evaluator sends for VENDOR_GEMM on CUDA (the worker is not started),
    and the names it asked the baseline-only worker to measure."""
    sent, asked = {}, []

    class Planned(Exception):
        pass

    def fake_worker(job, *args, **kwargs):
        sent.update(job)
        raise Planned

    def fake_measure(store_, spec, shape, device, versions, names, *args, **kwargs):
        asked.extend(names)
        return {}, "crash: not started"

    monkeypatch.setattr(run_job, "run_in_worker", fake_worker)
    monkeypatch.setattr(baselines, "measure_missing", fake_measure)
    # The worker-timed path (replay off): the only one that sends a timing plan to the candidate's
    # worker; with the replay the candidate's worker gets none at all (tests/judge/replay).
    monkeypatch.setenv("HAWKEYE_REPLAY", "off")
    v = Verdict(task=GEMM.id, device="cuda", stage=Stage.CORRECT, source_hash="0" * 64, versions=VERSIONS)
    with pytest.raises(Planned):
        Evaluator(store, config)._judge(VENDOR_GEMM, solution_source(GEMM), "cuda", v)
    return sent["timing"], asked


def test_only_the_baseline_worker_is_asked_for_baselines_and_cached_ones_are_skipped(monkeypatch):
    store = ResultStore(":memory:")
    plan, asked = _planned_job(monkeypatch, store, EvalConfig())
    assert plan["baselines"] == []  # the candidate's worker never times a baseline
    assert asked == ["eager", "compile", "fakeblas", "fakelib", "broken", "nolib"]
    store.put_unavailable_baseline(GEMM.id, SHAPE, "cuda", VERSIONS, "fakelib", "fakelib is not installed")
    store.put_baseline(GEMM.id, SHAPE, "cuda", VERSIONS, "eager", 1.0, {})
    assert _planned_job(monkeypatch, store, EvalConfig())[1] == ["compile", "fakeblas", "broken", "nolib"]
    assert _planned_job(monkeypatch, store, EvalConfig(vendor_baselines=False))[1] == ["compile"]
    assert EvalConfig().key()["vendor_baselines"] is True


def test_the_baseline_worker_gets_at_least_its_own_time_limit_whatever_the_candidates_is(monkeypatch):
    limits = []

    def fake_measure(store_, spec, shape, device, versions, names, timing, timeout_s, memory, lane=None):
        limits.append(timeout_s)
        return {}, "crash: not started"

    monkeypatch.setattr(baselines, "measure_missing", fake_measure)
    for candidate_limit in (20.0, 900.0):
        ev = Evaluator(ResultStore(":memory:"), EvalConfig(timeout_s=candidate_limit))
        ev.ensure_baselines(VENDOR_GEMM, "cuda", VERSIONS, seed=0)
    assert limits == [baselines.MEASURE_TIMEOUT_S, 900.0]
    assert baselines.MEASURE_TIMEOUT_S > 20.0


def _judge_concurrently(monkeypatch, store: ResultStore, measures: list[bool], n: int = 4) -> tuple[list, list, int]:
    """``n`` threads judge GEMM on CUDA with fake workers: baseline-only worker call ``i`` stays
    0.2 s and stores what it was asked for when ``measures[i]``; every candidate worker stays 0.1 s.
    Returns the baseline calls' names, the candidates' timing plans, and the most candidate
    workers ever in flight together."""
    import threading
    import time

    measured, plans, flight, peak, guard = [], [], [0], [0], threading.Lock()

    def fake_measure(store_, spec, shape, device, versions, names, timing, timeout_s, memory, lane=None):
        i = len(measured)
        measured.append(list(names))
        time.sleep(0.2)
        if measures[i]:
            for name in names:
                store.put_baseline(GEMM.id, SHAPE, "cuda", VERSIONS, name, 1.0, {})
            return {n: {"median_ms": 1.0} for n in names}, ""
        return {}, "crash: fake baseline worker"

    def fake_worker(job, *args, **kwargs):
        with guard:
            plans.append(list(job["timing"]["baselines"]))
            flight[0] += 1
            peak[0] = max(peak[0], flight[0])
        time.sleep(0.1)
        with guard:
            flight[0] -= 1
        return run_job.Outcome(None, "crash", "fake worker")

    monkeypatch.setattr(baselines, "measure_missing", fake_measure)
    monkeypatch.setattr(run_job, "run_in_worker", fake_worker)
    monkeypatch.setenv("HAWKEYE_REPLAY", "off")  # the path whose candidate worker gets a timing plan
    ev = Evaluator(store, EvalConfig(vendor_baselines=False))
    verdicts = [Verdict(task=GEMM.id, device="cuda", stage=Stage.CORRECT, source_hash=f"{i}" * 64, versions=VERSIONS)
                for i in range(n)]
    threads = [threading.Thread(target=ev._judge, args=(GEMM, solution_source(GEMM), "cuda", v)) for v in verdicts]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert all(v.profile.get("baseline_wait_s", -1) >= 0 for v in verdicts)
    return measured, plans, peak[0]


def test_a_baseline_only_worker_measures_missing_baselines_once_and_candidates_run_together(monkeypatch):
    measured, plans, peak = _judge_concurrently(monkeypatch, ResultStore(":memory:"), measures=[True])
    assert measured == [["eager", "compile"]]
    assert plans == [[], [], [], []]  # no candidate's worker times a baseline
    assert peak == 4


def test_when_the_baseline_worker_fails_no_candidate_times_them_and_the_next_verdict_retries(monkeypatch):
    measured, plans, _ = _judge_concurrently(monkeypatch, ResultStore(":memory:"), measures=[False, True], n=2)
    assert measured == [["eager", "compile"], ["eager", "compile"]]
    assert plans == [[], []]


def test_measuring_locks_are_per_task_shape_device_and_versions():
    locks = baselines.MeasuringLocks()
    assert locks.lock("t", SHAPE, "cuda", VERSIONS) is locks.lock("t", dict(SHAPE), "cuda", dict(VERSIONS))
    assert locks.lock("t", SHAPE, "cuda", VERSIONS) is not locks.lock("u", SHAPE, "cuda", VERSIONS)
    assert locks.lock("t", SHAPE, "cuda", VERSIONS) is not locks.lock("t", SHAPE, "cuda", {**VERSIONS, "torch": "y"})


def _entry(ms: float) -> dict:
    return {"median_ms": ms, "iqr_ms": 0.0, "cv": 0.01, "attempts": 1, "wall_median_ms": ms}


def _judge_timing(store: ResultStore, timing: dict, cached: dict | None = None) -> Verdict:
    v = Verdict(task=GEMM.id, device="cuda", stage=Stage.CORRECT, correct=True, versions=VERSIONS)
    Evaluator(store, EvalConfig())._check_timing(VENDOR_GEMM, SHAPE, "cuda", timing, cached or {}, v)
    v.reward = reward(v)
    return v


def test_verdict_reports_vendor_times_and_unavailable_ones_and_the_reward_ignores_them():
    store = ResultStore(":memory:")
    judged = {"eager": _entry(0.6), "compile": _entry(0.45)}
    judged_only = _judge_timing(ResultStore(":memory:"), {"candidate": {**_entry(0.3), "kept": []}}, judged)
    cached = {**judged, "fakeblas": _entry(0.15), "fakelib": {"unavailable": "fakelib is not installed"}}
    v = _judge_timing(store, {"candidate": {**_entry(0.3), "kept": []}}, cached)
    assert v.timed and v.times_ms["fakeblas"] == 0.15
    assert v.speedup == pytest.approx({"eager": 2.0, "compile": 1.5, "fakeblas": 0.5})
    assert v.vendor_baselines == ["fakeblas"]
    assert v.baselines_unavailable == {"fakelib": "fakelib is not installed"}
    assert v.best_speedup == pytest.approx(1.5) and v.reward == judged_only.reward
    lines = [ln for ln in render_feedback(v).splitlines() if "unavailable" in ln]
    assert lines == ["Baselines unavailable here: fakelib (fakelib is not installed)."]
    again = Verdict.from_dict(v.to_dict())
    assert again.vendor_baselines == ["fakeblas"] and reward(again) == v.reward


def test_cached_unavailable_vendor_is_reported_without_a_new_measurement():
    cached = {"eager": {"median_ms": 0.6}, "compile": {"median_ms": 0.9},
              "fakelib": {"unavailable": "fakelib is not installed"}}
    v = _judge_timing(ResultStore(":memory:"), {"candidate": {**_entry(0.3), "kept": []}}, cached)
    assert v.speedup == pytest.approx({"eager": 2.0, "compile": 3.0}) and v.vendor_baselines == []
    assert v.baselines_unavailable == {"fakelib": "fakelib is not installed"}


def test_baseline_entries_in_a_candidates_reply_are_a_forged_reply():
    from hawkeye_env.judge.parent.validate.reply_check import reply_problem

    plan = {"seed": 1, "iters": 50, "retries": 2, "baselines": []}
    job = {"trials": [], "timing": plan}
    reply = {"stage": "ok", "violations": [], "trials": [],
             "timing": {"candidate": {**_entry(0.3), "kept": []}, "compile": {"unavailable": "forged"}}}
    assert "candidate only" in reply_problem(job, reply)


def test_a_fast_vendor_baseline_does_not_lower_the_reward():
    slow = Verdict(task="t", device="cuda", stage=Stage.CORRECT, correct=True, timed=True,
                   speedup={"eager": 3.0, "compile": 2.0})
    with_vendor = dataclasses.replace(slow, speedup={**slow.speedup, "cublas": 0.5, "fla": float("nan")},
                                      vendor_baselines=["cublas", "fla"])
    assert with_vendor.best_speedup == slow.best_speedup == 2.0
    assert reward(with_vendor) == reward(slow) > 0.6


def test_prefetch_measures_each_tasks_missing_baselines_once_spread_over_the_lanes(monkeypatch):
    import threading
    import time

    from hawkeye_env.judge.parent import evaluator as evaluator_module
    from hawkeye_env.judge.parent.lanes import Lane

    store = ResultStore(":memory:")
    lanes = [Lane(gpu=0, lock_id="g0"), Lane(gpu=1, lock_id="g1")]
    calls, flight, peak, guard = [], [0], [0], threading.Lock()

    def fake_measure(store_, spec, shape, device, versions, names, timing, timeout_s, memory, lane=None):
        with guard:
            calls.append((spec.id, tuple(names), lane.gpu))
            flight[0] += 1
            peak[0] = max(peak[0], flight[0])
        time.sleep(0.2)
        with guard:
            flight[0] -= 1
        if spec.id == "softmax_fp32":  # one task's baselines stay unmeasured (a failing worker)
            return {}, "crash: fake"
        for name in names:
            store_.put_baseline(spec.id, dict(shape), device, versions, name, 1.0, {})
        return {}, ""

    monkeypatch.setattr(baselines, "measure_missing", fake_measure)
    monkeypatch.setattr(evaluator_module, "make_lanes", lambda device, gpus=None: lanes)
    monkeypatch.setattr(evaluator_module, "software_versions", lambda device, task=None: VERSIONS)
    monkeypatch.setattr(evaluator_module, "resolve_device", lambda device: device)  # no GPU here
    ev = Evaluator(store, EvalConfig(vendor_baselines=False))
    assert ev.prefetch_baselines(["gemm_bf16"], device="cpu") == {}  # nothing to time off CUDA
    missing = ev.prefetch_baselines(["gemm_bf16", "softmax_fp32", "rmsnorm_bf16"], device="cuda")
    assert missing == {"gemm_bf16": [], "softmax_fp32": ["eager", "compile"], "rmsnorm_bf16": []}
    assert sorted(c[0] for c in calls) == ["gemm_bf16", "rmsnorm_bf16", "softmax_fp32"]
    assert {c[2] for c in calls} == {0, 1} and peak[0] == 2  # both lanes, side by side
    per_lane = {g: [c[0] for c in calls if c[2] == g] for g in (0, 1)}
    assert sorted(map(len, per_lane.values())) == [1, 2]  # three tasks: one lane took two, in turn
    calls.clear()
    ev.prefetch_baselines(["gemm_bf16", "rmsnorm_bf16"], device="cuda")
    assert calls == []  # stored: nothing measured again
