"""The parent's timing checks, driven with synthetic worker replies (no GPU needed).

The worker's raw timings are only numbers; what they imply (an impossible time, work escaping the
timed stream, a stale timed output, a speedup) is decided in the parent, and is tested here.
"""

from __future__ import annotations

import pytest
import torch

from hawkeye_env.judge.evaluator import EvalConfig, Evaluator
from hawkeye_env.judge.roofline import UNKNOWN, ceiling_for, floor_ms
from hawkeye_env.judge.store import ResultStore
from hawkeye_env.judge.verdict import Stage, Verdict
from hawkeye_env.tasks.registry import get_task

GEMM = get_task("gemm_bf16")
SHAPE = dict(GEMM.gpu_shapes[0])


def test_h200_gemm_floor_is_flops_at_datasheet_peak():
    floor = floor_ms(GEMM.flops(**SHAPE), GEMM.bytes_moved(**SHAPE), "bfloat16", "NVIDIA H200")
    assert floor == pytest.approx(2 * 4096**3 / 989e12 * 1e3)


def test_memory_bound_floor_uses_bandwidth():
    task = get_task("vector_add_fp32")
    shape = dict(task.gpu_shapes[0])
    floor = floor_ms(task.flops(**shape), task.bytes_moved(**shape), "float32", "NVIDIA H200")
    assert floor == pytest.approx(12 * 2**26 / 4.8e12 * 1e3)


def test_unknown_gpu_gets_the_fastest_ceilings():
    assert ceiling_for("Some Future GPU") is UNKNOWN
    assert UNKNOWN.tbps >= max(ceiling_for(n).tbps for n in ("H100", "H200", "A100", "B200"))


def _timing(median, wall=None, kept=()):
    wall = median if wall is None else wall
    return {
        "candidate": {"median_ms": median, "iqr_ms": 0.0, "cv": 0.01, "attempts": 1,
                      "wall_median_ms": wall, "kept": list(kept)},
        "eager": {"median_ms": 0.25, "iqr_ms": 0.0, "cv": 0.01, "attempts": 1, "wall_median_ms": 0.26},
    }


def _check(timing) -> Verdict:
    ev = Evaluator(ResultStore(":memory:"), EvalConfig())
    v = Verdict(task=GEMM.id, device="cuda", stage=Stage.CORRECT, correct=True,
                versions={"gpu": "NVIDIA H200"})
    ev._check_timing(GEMM, SHAPE, "cpu", timing, {}, v)
    return v


def test_honest_timing_gives_speedups_and_is_stored():
    v = _check(_timing(0.2))
    assert v.timed and v.stage is Stage.CORRECT and not v.violations
    assert v.speedup == {"eager": pytest.approx(1.25)}
    assert v.times_ms["candidate"] == 0.2 and v.timing["roofline_floor_ms"] > 0


def test_time_below_roofline_floor_is_a_violation():
    v = _check(_timing(0.05))
    assert v.stage is Stage.REJECTED and not v.timed
    assert [x.code for x in v.violations] == ["impossible_time"]


def test_wall_clock_far_above_events_is_a_violation():
    v = _check(_timing(0.2, wall=1.0))
    assert [x.code for x in v.violations] == ["timing_escape"]


def test_stale_timed_output_is_a_violation():
    ref = torch.randn(8, 8)
    kept = [{"outputs": [ref.to(torch.bfloat16)], "reference": [ref]},
            {"outputs": [torch.zeros(8, 8, dtype=torch.bfloat16)], "reference": [ref]}]
    v = _check(_timing(0.2, kept=kept))
    assert [x.code for x in v.violations] == ["stale_timed_output"]
    assert "timed iteration 1" in v.violations[0].message
