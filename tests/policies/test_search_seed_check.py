"""Search seeds are kept only when they compute their task (``policies/seed_check.py``)."""

from __future__ import annotations

from hawkeye_env.tasks.registry import get_task, solution_source
from policies.search import compose_unit_seed, task_seeds
from policies.seed_check import computes_task

ROW_REDUCTION = "units.row_reduction.kernel:rms_norm"
ROW_REDUCTION_REFERENCE = "units.row_reduction.reference:rms_norm"


def _seed(task_id: str) -> str:
    spec = get_task(task_id)
    seed = compose_unit_seed(spec, solution_source(spec), "row_reduction", ROW_REDUCTION)
    assert seed is not None  # rms_norm(x, weight, eps) fits both forwards
    return seed


def test_a_unit_computing_the_task_is_kept_and_one_computing_another_function_is_dropped():
    assert computes_task(get_task("rmsnorm_bf16"), _seed("rmsnorm_bf16"), "rms_norm", ROW_REDUCTION_REFERENCE)
    assert not computes_task(get_task("layernorm_bf16"), _seed("layernorm_bf16"), "rms_norm", ROW_REDUCTION_REFERENCE)


def test_a_seed_that_cannot_run_is_dropped_not_raised():
    spec = get_task("rmsnorm_bf16")
    assert not computes_task(spec, "raise RuntimeError('broken seed')\n", "rms_norm", ROW_REDUCTION_REFERENCE)
    assert not computes_task(spec, _seed("rmsnorm_bf16"), "rms_norm", "units.row_reduction.reference:no_such_fn")


def test_task_seeds_keep_fitting_units_and_drop_layernorms_rms_norm():
    assert any("units/row_reduction" in s for s in task_seeds("rmsnorm_bf16")[1:])
    assert task_seeds("layernorm_bf16") == [solution_source(get_task("layernorm_bf16"))]
    assert len(task_seeds("gemm_bf16")) == 6
