"""The parent's timing checks, driven with synthetic worker replies (no GPU needed).

The worker's raw timings are only numbers; what they imply (an impossible time, work escaping the
timed stream, a stale timed output, a speedup) is decided in the parent, and is tested here.
"""

from __future__ import annotations

import pytest
import torch

from hawkeye_env.judge.parent.decide.feedback import render_feedback
from hawkeye_env.judge.parent.decide.roofline import UNKNOWN, ceiling_for, floor_ms
from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.shared.verdict import Stage, Verdict
from hawkeye_env.tasks.registry import get_task
from reward import reward
from reward.score import REWARD_INCORRECT, REWARD_VIOLATION

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


# The stored baselines (measured by a baseline-only worker; a reply never carries them).
BASELINES = {"eager": {"median_ms": 0.25, "scored_ms": 0.25, "iqr_ms": 0.0, "cv": 0.01, "attempts": 3},
             "compile": {"median_ms": 0.3, "scored_ms": 0.3, "iqr_ms": 0.0, "cv": 0.01, "attempts": 3}}


def _timing(median, wall=None, kept=(), host=None):
    """A candidate timing as ``timing.time_callable`` reports it: device time ``median``, clock
    checks whose host wall is ``wall`` (default: the device time), host launch ``host``."""
    wall = median if wall is None else wall
    host = 0.01 if host is None else host
    rows = [{**k, "native": k.get("native", [r.to(torch.bfloat16) for r in k["reference"]])} for k in kept]
    return {"candidate": {"median_ms": median, "scored_ms": median, "host_launch_ms": host, "host_bound": host > median,
                          "iqr_ms": 0.0, "cv": 0.01, "attempts": 3, "check_event_median_ms": median,
                          "check_wall_median_ms": wall, "wall_median_ms": median + 1.0, "kept": rows}}


def _check(timing, cached=None) -> Verdict:
    ev = Evaluator(ResultStore(":memory:"), EvalConfig())
    v = Verdict(task=GEMM.id, device="cuda", stage=Stage.CORRECT, correct=True,
                versions={"gpu": "NVIDIA H200"})
    ev._check_timing(GEMM, SHAPE, "cpu", timing, BASELINES if cached is None else cached, v)
    return v


def test_honest_timing_gives_speedups_of_scored_times():
    v = _check(_timing(0.2))
    assert v.timed and v.stage is Stage.CORRECT and not v.violations
    assert v.speedup == {"eager": pytest.approx(1.25), "compile": pytest.approx(1.5)}
    assert v.times_ms["candidate"] == 0.2 and v.timing["roofline_floor_ms"] > 0
    assert v.timing["precise"] is True


def test_a_host_bound_call_is_scored_at_its_device_time_and_says_it_is_host_bound():
    """Device time 0.2 ms but 0.5 ms of host work per call: the score reads 0.2 ms, the verdict and
    its feedback say that back to back it would run at the host's pace."""
    from hawkeye_env.judge.parent.decide.feedback import render_feedback

    v = _check(_timing(0.2, host=0.5))
    assert v.times_ms["candidate"] == 0.2 and v.speedup["eager"] == pytest.approx(1.25)
    assert v.timing["median_ms"] == 0.2 and v.timing["host_launch_ms"] == 0.5 and v.timing["host_bound"] is True
    assert "Host-bound: the host takes 0.5000 ms" in render_feedback(v)
    lean = _check(_timing(0.2, host=0.05))
    assert lean.timing["host_bound"] is False and "Host-bound" not in render_feedback(lean)


def test_an_imprecise_measurement_is_reported_and_not_paid():
    from reward.score import REWARD_CORRECT

    timing = _timing(0.2)
    timing["candidate"]["cv"] = 0.2
    v = _check(timing)
    assert v.timed and v.timing["precise"] is False and reward(v) == REWARD_CORRECT


def test_missing_judge_baselines_leave_the_speed_unscored():
    v = _check(_timing(0.2), cached={"eager": BASELINES["eager"]})
    assert v.correct and not v.timed and not v.speedup and "compile" in v.error


def test_time_below_roofline_floor_is_a_violation():
    v = _check(_timing(0.05))
    assert v.stage is Stage.REJECTED and not v.timed
    assert [x.code for x in v.violations] == ["impossible_time"]


def test_wall_clock_far_above_events_is_a_violation():
    v = _check(_timing(0.2, wall=1.0))
    assert [x.code for x in v.violations] == ["timing_escape"]


def test_stale_timed_output_is_a_violation():
    """Iteration 1 returns iteration 0's answer: the answer for other timing inputs."""
    ref, other = torch.randn(8, 8), torch.randn(8, 8)
    kept = [{"outputs": [ref.to(torch.bfloat16)], "reference": [ref]},
            {"outputs": [ref.to(torch.bfloat16)], "reference": [other]}]
    v = _check(_timing(0.2, kept=kept))
    assert [x.code for x in v.violations] == ["stale_timed_output"]
    assert "timed iteration 1" in v.violations[0].message
    assert "the answer for timed iteration 0's inputs" in v.violations[0].message


def test_the_warm_up_answer_in_the_timed_loop_is_a_violation():
    """A cache filled at the warm-up (``references.kept_references``' ``others``) is stale."""
    ref, warm = torch.randn(8, 8), torch.randn(8, 8)
    kept = [{"outputs": [warm.to(torch.bfloat16)], "reference": [ref],
             "others": [("the warm-up's inputs", [warm.to(torch.bfloat16)])]}]
    v = _check(_timing(0.2, kept=kept))
    assert [x.code for x in v.violations] == ["stale_timed_output"]
    assert "the answer for the warm-up's inputs" in v.violations[0].message


def test_a_timed_output_wrong_for_every_input_is_incorrect():
    """Zeros match no timing input's answer: incorrect, not stale."""
    ref = torch.randn(8, 8)
    kept = [{"outputs": [ref.to(torch.bfloat16)], "reference": [ref]},
            {"outputs": [torch.zeros(8, 8, dtype=torch.bfloat16)], "reference": [ref]}]
    v = _check(_timing(0.2, kept=kept))
    assert not v.violations and v.stage is Stage.INCORRECT and "timed iteration 1" in v.error


def _borderline(ref: torch.Tensor) -> torch.Tensor:
    """``ref`` in bf16 with one element 12x past its bound: relative L2 ~2e-3, within bf16's 8e-3."""
    out = ref.to(torch.bfloat16)
    out[0, 0] = ref[0, 0] + 0.2  # bound there: 0.016 * rms(ref) + 0.016 * |ref| with |ref| = 0
    return out


def _zeroed_ref() -> torch.Tensor:
    ref = torch.randn(128, 128, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    ref[0, 0] = 0.0
    return ref


def test_borderline_timed_output_is_incorrect_not_a_violation():
    """A kept output within relative L2 that misses one element bound is numerically borderline:
    incorrect (no speedup, the incorrect reward), not a stale output."""
    ref = _zeroed_ref()
    kept = [{"outputs": [ref.to(torch.bfloat16)], "reference": [ref]},
            {"outputs": [_borderline(ref)], "reference": [ref]}]
    v = _check(_timing(0.2, kept=kept))
    assert not v.violations
    assert v.stage is Stage.INCORRECT and not v.correct and not v.timed and not v.speedup
    assert "numerically borderline" in v.error and "timed iteration 1" in v.error
    assert "element 0" in v.error and "within 0.008" in v.error
    assert reward(v) == REWARD_INCORRECT
    v.feedback = render_feedback(v)
    assert v.feedback.startswith(f"[{GEMM.id} on cuda] INCORRECT") and "numerically borderline" in v.feedback


def test_stale_timed_output_beside_a_borderline_one_is_still_a_violation():
    """An output for other timing inputs stays ``stale_timed_output``, whatever else failed."""
    ref = _zeroed_ref()
    other = torch.randn(128, 128, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    kept = [{"outputs": [_borderline(ref)], "reference": [ref]},
            {"outputs": [ref.to(torch.bfloat16)], "reference": [other]}]
    v = _check(_timing(0.2, kept=kept))
    assert [x.code for x in v.violations] == ["stale_timed_output"]
    assert "timed iteration 1" in v.violations[0].message
    assert v.stage is Stage.REJECTED and not v.correct and not v.timed
    assert reward(v) == REWARD_VIOLATION


def test_timed_output_with_nan_is_incorrect():
    """NaN on new inputs may be an honest overflow: incorrect, not a violation."""
    ref = _zeroed_ref()
    out = ref.to(torch.bfloat16)
    out[5, 5] = float("nan")
    v = _check(_timing(0.2, kept=[{"outputs": [out], "reference": [ref]}]))
    assert not v.violations and v.stage is Stage.INCORRECT and "NaN/Inf" in v.error
