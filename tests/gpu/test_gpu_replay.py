"""GPU-only: verdicts come from the trusted replay of the worker's launch plans (``replay.py``).

Skipped without CUDA (the reason is printed); run on the H200 and recorded in BENCHMARKS.md.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.shared.verdict import Stage
from hawkeye_env.tasks.registry import get_task, solution_source

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU: the replay loads compiled cubins"),
]
CANDIDATES = Path(__file__).parent.parent / "candidates" / "gpu"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return ResultStore(tmp_path_factory.mktemp("store") / "results.sqlite3")


def _judge(store, task, source, **kw):
    return Evaluator(store, EvalConfig(seed=0, iters=20, baselines=("eager",), **kw)).evaluate(
        task, source, "cuda", use_cache=False)


@pytest.mark.parametrize("task", ["vector_add_fp32", "gemm_bf16", "attention_causal_bf16"])
def test_expert_verdicts_come_from_the_replay(store, task):
    v = _judge(store, task, solution_source(get_task(task)))
    assert v.stage == Stage.CORRECT and v.timed, v.feedback
    assert v.versions["replay"] == "replay"
    assert v.profile["replay_wall_s"] > 0 and v.profile["replay.timing_s"] > 0


@pytest.mark.parametrize("task", ["fp8_gemm_per_tensor", "fp8_gemm_per_row", "linear_prefill_bf16",
                                  "linear_large_bf16", "attention_causal_bf16", "attention_gqa_bf16", "attention_bf16"])
def test_gluon_experts_are_recorded_and_replayed(store, task):
    """These experts launch a warp-specialized Gluon kernel with host TMA descriptors: the
    sandboxed worker records its compiled cubin and descriptor arguments, and the trusted replay
    runs it on inputs the worker never saw."""
    assert "from units.ws_" in solution_source(get_task(task))
    v = _judge(store, task, solution_source(get_task(task)))
    assert v.stage == Stage.CORRECT and v.timed, v.feedback
    assert v.versions["replay"] == "replay"
    assert v.profile["replay_wall_s"] > 0 and v.profile["replay.timing_s"] > 0


@pytest.mark.parametrize("task", ["linear_decode_bf16", "gemm_skinny_bf16"])
def test_a_workspace_made_before_the_forward_travels_as_a_constant(store, task):
    """These experts' split-K kernel counts each tile's arrivals in an int32 buffer made on the first
    call and reused (``units.persistent_splitk.kernel.arrival_counters``): the worker's recording
    copies it as a constant without the copy counting as the forward's ops, the replay restores
    it between calls, and the verdict is correct and timed."""
    assert "fused_reduce" in solution_source(get_task(task))
    v = _judge(store, task, solution_source(get_task(task)))
    assert v.stage == Stage.CORRECT and v.timed, (v.violations, v.feedback)
    assert v.versions["replay"] == "replay"


def test_a_guard_bypass_is_judged_on_what_its_kernels_compute(store):
    """The answer computed with torch's Python dispatch off escapes the worker's op recorder;
    the replay runs only the recorded decoy kernel, whose outputs are zeros."""
    v = _judge(store, "vector_add_fp32", (CANDIDATES / "dispatch_bypass.py").read_text(), static_checks=False)
    assert v.stage in (Stage.INCORRECT, Stage.REJECTED) and not v.correct, v.feedback
    assert v.reward < 0


def test_a_host_read_of_device_data_is_not_replayable(store):
    """Statically rejected (``.item`` is not on the allowlist); with static checks off, the
    recording worker's op recorder rejects the host read (``_local_scalar_dense`` is on no
    allowlist) before any plan is replayed."""
    source = (CANDIDATES / "host_read.py").read_text()
    assert _judge(store, "vector_add_fp32", source).stage == Stage.REJECTED
    v = _judge(store, "vector_add_fp32", source, static_checks=False)
    assert v.stage == Stage.REJECTED and v.reward < 0, v.feedback
    assert any(x.code == "torch_compute_op" and "_local_scalar_dense" in x.message for x in v.violations), v.feedback


@pytest.mark.parametrize("name, task", [("pointer_cache.py", "vector_add_fp32"),
                                        ("unobserved_less_work.py", "gemm_bf16")])
def test_call_counting_hacks_gain_nothing_under_replay(store, name, task):
    """Hacks that change behaviour after some calls record their honest first call; the replay
    times that plan, so no speedup beyond the honest kernel's is paid. The honest kernel is the
    hack's own twin that never changes behaviour where it has one (its tile configuration is not
    the expert's, and may be faster or slower on a given GPU), else the expert."""
    source = (CANDIDATES / name).read_text()
    twin = source.replace("UNOBSERVED_AFTER = 12", "UNOBSERVED_AFTER = 10**9")
    honest = _judge(store, task, twin if twin != source else solution_source(get_task(task)))
    v = _judge(store, task, source)
    if v.timed:
        assert v.speedup["eager"] <= 1.05 * honest.speedup["eager"], (v.speedup, honest.speedup)
    else:
        assert v.reward < 0, v.feedback
