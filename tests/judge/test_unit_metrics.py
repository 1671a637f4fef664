"""Each unit's metric for a profiled candidate beside the expert's (``parent/profiling/unit_metrics.py``),
from hand-made profiles: on CPU no metric has a value and the sm_90 machine code's facts of the unit's
strategy are shown instead; from a GPU profile's Nsight Compute rows the TFLOP/s, TB/s and L2 hit rate
follow from the task's own counts, and the unit's pass rule compares the two."""

from __future__ import annotations

import pytest

from hawkeye_env.judge.parent.profiling.report import KernelProfile
from hawkeye_env.judge.parent.profiling.unit_metrics import (
    FACTS,
    NEEDS_GPU,
    STATIC_FACTS,
    metric_value,
    unit_lines,
    unit_metrics,
)
from hawkeye_env.tasks.registry import get_task
from units import list_units

GEMM_KERNEL = {"name": "gemm", "launches": 1, "registers": 168, "num_warps": 8, "num_stages": 4, "fma": 2,
               "instructions": 900, "mma": {"HGMMA.64x128x16.F32.BF16": 8, "HFMA2.MMA": 3},
               "tma": {"UTMALDG": 2}, "async_copies": {}, "global_loads": {"128": 4, "32": 12}}
FMA_KERNEL = {"name": "fma", "launches": 2, "registers": 40, "num_warps": 4, "num_stages": 2, "fma": 68,
              "instructions": 432, "mma": {}, "tma": {}, "async_copies": {"32": 2}, "global_loads": {"8": 8}}


def _profile(task: str, shape: dict, kernels: list[dict], device: str = "cpu", counters: dict | None = None):
    return KernelProfile(task, device, shape, kernels=kernels, counters=counters or {"unavailable": "CPU"})


def test_every_runnable_unit_names_static_facts_that_exist():
    names = {u.name for u in list_units(include_on_paper=False)}
    assert names <= set(STATIC_FACTS), f"units without STATIC_FACTS: {sorted(names - set(STATIC_FACTS))}"
    assert all(set(labels) <= set(FACTS) for labels in STATIC_FACTS.values())


def test_on_cpu_each_unit_needs_a_gpu_and_shows_its_strategy_in_the_machine_code():
    spec = get_task("nvfp4_gemm_bf16")
    shape = dict(spec.cpu_shapes[1])
    rows = unit_metrics(spec, _profile(spec.id, shape, [FMA_KERNEL]), _profile(spec.id, shape, [GEMM_KERNEL]))
    assert [r["unit"] for r in rows] == ["mxfp4_gemm", "nvfp4_gemm"]
    row = rows[1]
    assert row["metric"] == "achieved_tflops" and row["candidate"] is None and row["expert"] is None
    assert row["why"] == NEEDS_GPU and row["passes"] is None
    assert row["static"]["candidate"] == {"matrix instructions": 0, "FMA": 68, "instructions": 432,
                                          "registers/thread": 40}
    assert row["static"]["expert"]["matrix instructions"] == 8  # HFMA2.MMA is an FMA, not a matrix instruction
    header, _, line = unit_lines(rows)
    assert header.endswith(f"(needs a GPU: each metric is {NEEDS_GPU}):")
    assert line.startswith("- nvfp4_gemm, achieved_tflops (TFLOP/s): needs a GPU. From the sm_90 machine code: ")
    assert "matrix instructions 0 vs 8; FMA 68 vs 2" in line


def test_a_gpu_profile_gives_the_metric_for_both_and_the_units_pass_rule():
    spec = get_task("vector_add_fp32")
    shape = dict(spec.gpu_shapes[0])
    bytes_moved = spec.bytes_moved(**shape)
    # 2 TB/s: the candidate's two kernels take bytes / 2e12 s together; the expert's one kernel 3 TB/s
    mine = {"kernels": [{"name": "a", "duration_us": bytes_moved / 2e12 * 1e6 / 4},
                        {"name": "b", "duration_us": bytes_moved / 2e12 * 1e6 * 3 / 4}]}
    theirs = {"kernels": [{"name": "c", "duration_us": bytes_moved / 3e12 * 1e6}]}
    [row] = unit_metrics(spec, _profile(spec.id, shape, [FMA_KERNEL], "cuda", mine),
                         _profile(spec.id, shape, [FMA_KERNEL], "cuda", theirs))
    assert row["unit"] == "coalesced_access" and row["metric"] == "achieved_tbps"
    assert row["candidate"] == pytest.approx(2.0) and row["expert"] == pytest.approx(3.0) and row["passes"] is False
    assert "achieved_tbps (TB/s): 2 vs 3; misses the unit's pass rule" in unit_lines([row])[1]


def test_the_l2_hit_rate_is_weighted_by_duration_and_an_uncollected_counter_is_said():
    spec = get_task("gemm_bf16")
    shape = dict(spec.gpu_shapes[0])
    rows = {"kernels": [{"name": "a", "duration_us": 30.0, "l2_hit_rate_pct": 90.0},
                        {"name": "b", "duration_us": 10.0, "l2_hit_rate_pct": 50.0}]}
    p = _profile(spec.id, shape, [GEMM_KERNEL], "cuda", rows)
    assert metric_value(spec, "lts__t_sector_hit_rate.pct", p) == (pytest.approx(80.0), "")
    value, why = metric_value(spec, "dram__bytes.sum", p)
    assert value is None and "not among the profile's Nsight Compute metrics" in why
    unavailable = _profile(spec.id, shape, [GEMM_KERNEL], "cuda", {"unavailable": "ncu is not installed"})
    assert metric_value(spec, "achieved_tflops", unavailable) == (None, "ncu is not installed")
    failed = KernelProfile(spec.id, "cuda", shape, stage="compile_error", error="SyntaxError")
    assert metric_value(spec, "achieved_tflops", failed) == (None, "not profiled")
