"""The curated backward tasks whose parameter gradients reduce across rows (``rmsnorm_bwd_bf16``,
``layernorm_bwd_bf16``, ``linear_cross_entropy_bf16``): the judge's comparison, calibrated by the
native reference as in a verdict, accepts each expert and rejects it with the cross-row reduction
cut short (one edit of the expert's host code: the column reduction reads one program's partial
sums, or grad_weight keeps only the last token chunk). The full verdicts on the experts are
``test_suite_tasks.py``'s."""

from __future__ import annotations

import importlib.util

import pytest
import torch

from hawkeye_env.judge.parent.decide.checks import first_failure
from hawkeye_env.judge.parent.decide.references import as_list, build, native_reference, reference64
from hawkeye_env.judge.sandboxed.common.interpreter.fixes import install_interpreter_fixes
from hawkeye_env.tasks.registry import get_task, task_module

# task -> (the expert's text, what the broken variant has instead)
CUT_REDUCTIONS = {
    "rmsnorm_bwd_bf16": ("partial, dw, n_progs, n,", "partial, dw, 1, n,"),
    "layernorm_bwd_bf16": ("partial, dw, db, n_progs, n,", "partial, dw, db, 1, n,"),
    "linear_cross_entropy_bf16": ("accumulate=start > 0)", "accumulate=False)"),
}


def _model_new(task_id: str, folder, edit: tuple[str, str] | None):
    """The expert's ``ModelNew`` class, with ``edit`` applied to its source when given."""
    spec = get_task(task_id)
    source = open(importlib.util.find_spec(spec.solution).origin, encoding="utf-8").read()
    if edit is not None:
        assert source.count(edit[0]) == 1, edit[0]
        source = source.replace(*edit)
    path = folder / f"{task_id}_{'cut' if edit else 'expert'}.py"
    path.write_text(source, encoding="utf-8")
    loaded = importlib.util.spec_from_file_location(f"reduction_bwd_{path.stem}", path)
    module = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(module)
    return module.ModelNew


def _failure(task_id: str, model_cls, shape: dict) -> dict | None:
    """The judge's first failing comparison for one ``normal`` trial at ``shape``, or None."""
    install_interpreter_fixes()
    spec = get_task(task_id)
    ref, inputs = build(spec, shape, "normal", 0, "cpu")
    new = model_cls(*task_module(spec).get_init_inputs(**shape))
    new.load_state_dict(ref.state_dict())
    with torch.no_grad():
        outs = as_list(new(*inputs))
    natives = native_reference(ref, inputs)
    return first_failure(spec, outs, reference64(ref, inputs), [o.dtype for o in natives], "cpu", natives)


@pytest.mark.parametrize("task_id", sorted(CUT_REDUCTIONS))
def test_expert_passes_and_a_cut_reduction_fails(task_id, tmp_path):
    shape = dict(get_task(task_id).cpu_shapes[0])
    assert _failure(task_id, _model_new(task_id, tmp_path, None), shape) is None
    failed = _failure(task_id, _model_new(task_id, tmp_path, CUT_REDUCTIONS[task_id]), shape)
    assert failed is not None and not failed["ok"]


def test_reference_gradients_follow_float64():
    """The judge's float64 run of a backward reference is exact: its gradients are float64, and
    natively they are the parameters' and inputs' own dtypes."""
    spec = get_task("rmsnorm_bwd_bf16")
    ref, inputs = build(spec, dict(spec.cpu_shapes[0]), "normal", 0, "cpu")
    assert [o.dtype for o in native_reference(ref, inputs)] == [torch.bfloat16, torch.bfloat16]
    assert [o.dtype for o in reference64(ref, inputs, keep_float64=True)] == [torch.float64, torch.float64]
