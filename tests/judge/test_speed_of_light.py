"""The speed of light (``parent/decide/speed_of_light.py``): its floors per task and GPU, the clock it
scales to, and the fraction a timed verdict reports (driven with a synthetic timing, no GPU)."""

from __future__ import annotations

import math

import pytest

from hawkeye_env.judge.parent.decide.feedback import render_feedback
from hawkeye_env.judge.parent.decide.roofline import floor_ms
from hawkeye_env.judge.parent.decide.speed_of_light import (
    DATASHEET_CLOCK_MHZ,
    JUDGED_GPUS,
    fraction,
    precision_of,
    speed_of_light,
)
from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.shared.verdict import Stage, Verdict
from hawkeye_env.tasks.registry import get_task, list_tasks

GEMM = get_task("gemm_bf16")
SHAPE = dict(GEMM.gpu_shapes[0])


def test_a_bf16_gemm_is_compute_bound_at_the_bf16_peak():
    light = speed_of_light(GEMM, SHAPE, "NVIDIA H200")
    assert light.bound == "compute" and light.precision == "bfloat16" and light.clock_mhz is None
    assert light.ms == pytest.approx(2 * 4096**3 / 989e12 * 1e3)


def test_a_vector_add_is_memory_bound_at_each_gpus_bandwidth():
    task = get_task("vector_add_fp32")
    shape = dict(task.gpu_shapes[0])
    for gpu, tbps in (("NVIDIA H100 80GB HBM3", 3.35), ("NVIDIA H200", 4.8)):
        light = speed_of_light(task, shape, gpu)
        assert light.bound == "memory" and light.ms == pytest.approx(12 * 2**26 / (tbps * 1e12) * 1e3)


def test_each_task_is_measured_at_the_precision_it_must_compute_in():
    assert precision_of(get_task("fp8_gemm_per_tensor")) == "float8"
    assert precision_of(get_task("mxfp4_gemm_bf16")) == "float8"  # the fastest type its decoded values fit
    assert precision_of(get_task("softmax_fp32")) == "float32"  # fp32 tolerance rejects tf32 and bf16
    assert precision_of(GEMM) == "bfloat16"
    fp8 = get_task("fp8_gemm_per_tensor")
    assert speed_of_light(fp8, dict(fp8.gpu_shapes[0]), "NVIDIA H200").ms == pytest.approx(2 * 8192**3 / 1979e12 * 1e3)


def test_the_compute_peak_scales_with_the_clock_the_timing_ran_at():
    tensor_clock = DATASHEET_CLOCK_MHZ["H200"]["tensor"]
    base = speed_of_light(GEMM, SHAPE, "NVIDIA H200")
    assert speed_of_light(GEMM, SHAPE, "NVIDIA H200", tensor_clock).ms == pytest.approx(base.ms)
    fast = speed_of_light(GEMM, SHAPE, "NVIDIA H200", 1980.0)
    assert fast.clock_mhz == 1980.0 and fast.ms == pytest.approx(base.ms * tensor_clock / 1980.0)
    task = get_task("vector_add_fp32")  # memory-bound: HBM keeps its own clock
    shape = dict(task.gpu_shapes[0])
    assert speed_of_light(task, shape, "NVIDIA H200", 1200.0).ms == speed_of_light(task, shape, "NVIDIA H200").ms


@pytest.mark.parametrize("clock", [0.0, -1.0, math.nan, math.inf, 1e6, "fast", None])
def test_a_clock_that_is_not_one_is_ignored(clock):
    light = speed_of_light(GEMM, SHAPE, "NVIDIA H200", clock)
    assert light.clock_mhz is None and light.ms == speed_of_light(GEMM, SHAPE, "NVIDIA H200").ms


def test_every_task_has_a_floor_per_judged_gpu_at_or_above_the_roofline_floor():
    for spec in list_tasks():
        shape = dict(spec.gpu_shapes[0])
        for gpu in JUDGED_GPUS:
            light = speed_of_light(spec, shape, gpu)
            safety = floor_ms(spec.flops(**shape), spec.bytes_moved(**shape), spec.dtypes[0], gpu)
            assert light.ms > 0 and light.ms >= safety * (1 - 1e-12), (spec.id, gpu)


@pytest.mark.parametrize("measured", [0.0, -1.0, math.nan, math.inf, "x"])
def test_fraction_of_a_time_that_is_not_one_is_none(measured):
    assert fraction(0.1, measured) is None


def test_a_timed_verdict_reports_its_fraction_and_the_feedback_shows_it():
    cand = {"median_ms": 0.2, "scored_ms": 0.2, "host_launch_ms": 0.01, "host_bound": False, "iqr_ms": 0.0,
            "cv": 0.01, "attempts": 3, "check_event_median_ms": 0.2, "check_wall_median_ms": 0.2,
            "wall_median_ms": 1.2, "kept": [], "sm_clock_mhz": 1980.0}
    baselines = {n: {"median_ms": ms, "scored_ms": ms, "iqr_ms": 0.0, "cv": 0.01, "attempts": 3}
                 for n, ms in (("eager", 0.25), ("compile", 0.3))}
    v = Verdict(task=GEMM.id, device="cuda", stage=Stage.CORRECT, correct=True, versions={"gpu": "NVIDIA H200"})
    evaluator = Evaluator(ResultStore(":memory:"), EvalConfig())
    evaluator._check_timing(GEMM, SHAPE, "cpu", {"candidate": cand}, baselines, v)
    light = speed_of_light(GEMM, SHAPE, "NVIDIA H200", 1980.0)
    assert v.timed and v.timing["sol_ms"] == pytest.approx(light.ms) and v.timing["sm_clock_mhz"] == 1980.0
    assert v.timing["sol_fraction"] == pytest.approx(light.ms / 0.2) and v.timing["sol_bound"] == "compute"
    assert f"Speed of light {light.ms:.4f} ms (compute-bound, bfloat16 peak at the 1980 MHz" in render_feedback(v)
    assert Verdict.from_dict(v.to_dict()).timing["sol_fraction"] == v.timing["sol_fraction"]


def test_hawkeye_tasks_show_gives_the_floor_on_each_judged_gpu():
    import json

    from typer.testing import CliRunner

    from hawkeye_env.cli import app

    shown = json.loads(CliRunner().invoke(app, ["tasks", "show", "gemm_bf16", "--json"]).output)["speed_of_light"]
    assert set(shown) == set(JUDGED_GPUS)
    assert shown["H200"]["ms"] == pytest.approx(speed_of_light(GEMM, SHAPE, "NVIDIA H200").ms)
    assert shown["H100"]["bound"] == "compute" and shown["H100"]["precision"] == "bfloat16"
