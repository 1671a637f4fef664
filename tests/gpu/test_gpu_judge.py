"""GPU-only judge checks: timing defences that need real CUDA streams, events and an L2 cache.

Skipped on machines without CUDA (the reason is printed); run on the H200 and recorded in
BENCHMARKS.md and bench/results/.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.shared.verdict import Stage
from hawkeye_env.tasks.registry import get_task, solution_source
from tests.tasks import CONFORMANCE_TASKS

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(
        not torch.cuda.is_available(), reason="needs a CUDA GPU: timing defences use CUDA streams, events and L2"
    ),
]
CANDIDATES = Path(__file__).parent.parent / "candidates" / "gpu"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return ResultStore(tmp_path_factory.mktemp("store") / "results.sqlite3")


def _evaluator(store, **kw) -> Evaluator:
    return Evaluator(store, EvalConfig(seed=0, iters=20, baselines=("eager",), **kw))


# The conformance tasks here; every suite task's expert solution is judged on the GPU by
# ``python -m bench.tasks --device cuda`` (same evaluator, recorded in BENCHMARKS.md).
@pytest.mark.parametrize("task", CONFORMANCE_TASKS)
def test_expert_solution_is_correct_and_timed(store, task):
    v = _evaluator(store).evaluate(task, solution_source(get_task(task)), "cuda")
    assert v.stage == Stage.CORRECT, v.feedback
    assert v.timed and v.speedup["eager"] > 0
    assert v.timing["median_ms"] >= v.timing["roofline_floor_ms"]
    assert 0.2 < v.reward <= 1.0


def test_side_stream_gains_nothing_under_replay_and_is_caught_by_the_clocks(store, monkeypatch):
    """Without the replay (the worker times its own calls) the clock check catches the side
    stream; with it, the replay launches the recorded kernels on its own stream, so the side
    work is timed like any other and the candidate is no faster than the honest expert."""
    source = (CANDIDATES / "side_stream.py").read_text()
    replayed = _evaluator(store).evaluate("vector_add_fp32", source, "cuda", use_cache=False)
    honest = _evaluator(store).evaluate("vector_add_fp32", solution_source(get_task("vector_add_fp32")), "cuda")
    assert not replayed.timed or replayed.speedup["eager"] < honest.speedup["eager"], replayed.feedback
    monkeypatch.setenv("HAWKEYE_REPLAY", "off")
    v = _evaluator(store, static_checks=False).evaluate("vector_add_fp32", source, "cuda")
    assert v.stage == Stage.REJECTED, v.feedback
    assert "timing_escape" in {x.code for x in v.violations}, v.feedback
    assert v.reward == -1.0


def test_patched_timer_is_rejected(store):
    source = (CANDIDATES / "timer_patch.py").read_text()
    v = _evaluator(store, static_checks=False).evaluate("vector_add_fp32", source, "cuda")
    assert "judge_patched" in {x.code for x in v.violations}, v.feedback
    assert v.reward == -1.0


def test_cached_output_in_timed_loop_is_rejected(store, monkeypatch):
    """The worker's own timed loop (replay off) catches the stale cache; under the replay the
    hack gains nothing (``test_gpu_replay.py``)."""
    monkeypatch.setenv("HAWKEYE_REPLAY", "off")
    source = (CANDIDATES / "pointer_cache.py").read_text()
    v = _evaluator(store).evaluate("vector_add_fp32", source, "cuda")
    assert "stale_timed_output" in {x.code for x in v.violations}, v.feedback


def test_l2_is_flushed_between_timed_iterations():
    """A 48 MB working set fits the H200's 60 MB L2: without the flush a copy would run above DRAM
    bandwidth. With it, the harness must never report more than the datasheet 4.8 TB/s."""
    from hawkeye_env.judge.parent.decide.roofline import ceiling_for
    from hawkeye_env.judge.sandboxed.common.timing import time_callable

    n = 1 << 22
    a, b = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    t = time_callable(torch.add, [a, b], iters=30, retries=1, seed=0)
    tbps = 3 * 4 * n / (t["median_ms"] * 1e-3) / 1e12
    assert tbps <= ceiling_for(torch.cuda.get_device_name()).tbps, f"{tbps:.2f} TB/s: L2 was not flushed"


def test_standby_workers_judge_like_fresh_ones(store, monkeypatch):
    """On CUDA the second candidate goes to a standby whose CUDA context and Triton runtime were
    loaded before it arrived; the verdict is the same as a fresh worker's."""
    from hawkeye_env.judge.parent.launch import standby

    pool = standby.StandbyPool()
    monkeypatch.setattr(standby, "POOL", pool)
    ev = _evaluator(store)
    source = solution_source(get_task("softmax_fp32"))
    try:
        first, second = (ev.evaluate("softmax_fp32", source, "cuda", use_cache=False) for _ in range(2))
    finally:
        pool.shutdown()
    assert first.stage == second.stage == Stage.CORRECT, second.feedback
    assert "worker.standby" not in first.profile and second.profile["worker.standby"] == 1.0
    assert second.timed and second.profile["reply_mb"] > 0


def test_missing_baselines_are_timed_in_a_baseline_only_worker(tmp_path, monkeypatch):
    """A verdict that finds no stored baselines has them timed by a candidate-free worker first;
    the process that times the candidate (the replay, or the worker when worker-timed) times none."""
    from hawkeye_env.judge.parent.launch import run_job

    plans = []
    real = run_job.run_in_worker

    def spy(job, *args, **kwargs):
        if job.get("timing") is not None:  # the replay's recording job carries no timing plan
            plans.append(list(job["timing"]["baselines"]))
        return real(job, *args, **kwargs)

    monkeypatch.setattr(run_job, "run_in_worker", spy)
    fresh = ResultStore(tmp_path / "results.sqlite3")
    v = _evaluator(fresh).evaluate("softmax_fp32", solution_source(get_task("softmax_fp32")), "cuda", use_cache=False)
    assert v.stage == Stage.CORRECT and v.timed, v.feedback
    assert plans == [[]] and v.times_ms["eager"] > 0
    assert v.profile["baseline_wait_s"] >= 0


def test_prefetch_measures_every_tasks_baselines_into_the_store(tmp_path):
    fresh = ResultStore(tmp_path / "prefetch.sqlite3")
    judge = _evaluator(fresh)
    assert judge.prefetch_baselines(["softmax_fp32", "vector_add_fp32"], "cuda") == {
        "softmax_fp32": [], "vector_add_fp32": []}
    v = judge.evaluate("vector_add_fp32", solution_source(get_task("vector_add_fp32")), "cuda", use_cache=False)
    assert v.timed and "baseline_wait_s" not in v.profile  # nothing left to measure


def test_a_kernel_that_does_less_work_when_unobserved_is_caught(store, monkeypatch):
    """docs/threat-model.md #24 on the GPU: correct in every correctness trial, a quarter of the rows
    skipped in the timed loop. Every timed call is guarded and the kept ones are drawn from all of
    them, so the skipped rows show in a kept output: rejected, never a speedup."""
    monkeypatch.setenv("HAWKEYE_REPLAY", "off")  # the worker's own timing; the replay: test_gpu_replay.py
    source = (CANDIDATES / "unobserved_less_work.py").read_text()
    v = Evaluator(store, EvalConfig(seed=0)).evaluate("gemm_bf16", source, "cuda", use_cache=False)
    assert v.stage in (Stage.REJECTED, Stage.INCORRECT) and not v.timed, v.feedback
    assert v.reward < 0
    honest = Evaluator(store, EvalConfig(seed=0)).evaluate("gemm_bf16", solution_source(get_task("gemm_bf16")),
                                                           "cuda", use_cache=False)
    assert honest.stage == Stage.CORRECT and honest.timed, honest.feedback


def test_workers_are_sandboxed_on_the_gpu(store):
    """The OS sandbox holds on a GPU machine too: the worker sees the GPU but cannot write the
    store, and its verdict names the run_job."""
    from hawkeye_env.judge.parent.launch import isolation

    if isolation.mode() == isolation.OFF:
        pytest.skip("HAWKEYE_SANDBOX=off")
    probe = (
        "import torch\nfrom torch import nn\n\n\nclass ModelNew(nn.Module):\n    def forward(self, a, b):\n"
        f"        try:\n            open({str(store.path)!r}, 'a').write('x')\n            w = 'written'\n"
        "        except OSError as exc:\n            w = type(exc).__name__\n"
        "        raise RuntimeError('<R>' + w + ' ' + str(torch.cuda.is_available()) + '</R>')\n"
    )
    v = Evaluator(store, EvalConfig(seed=0, static_checks=False)).evaluate("vector_add_fp32", probe, "cuda",
                                                                           use_cache=False)
    assert "<R>OSError True</R>" in v.error, v.error
    assert v.versions["sandbox"] == "bwrap"
