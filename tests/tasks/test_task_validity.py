"""Every task can judge: its reference is not near constant (docs/threat-model.md #11) and its tolerance
accepts the reference's own native-precision output while rejecting a lower precision (#10)."""

from __future__ import annotations

import copy

import pytest
import torch

from hawkeye_env.judge.parent.decide.correctness import compare, dtype_name, is_near_constant
from hawkeye_env.judge.parent.decide.references import as_list
from hawkeye_env.judge.shared.inputs import make_inputs, randomize_parameters
from hawkeye_env.tasks.registry import list_tasks, task_module
from hawkeye_env.tasks.spec import BF16, DISTRIBUTIONS

CASES = [(spec, shape, dist) for spec in list_tasks() for shape in spec.cpu_shapes for dist in DISTRIBUTIONS]
LOWER = {torch.float32: torch.bfloat16, torch.bfloat16: torch.float8_e4m3fn}
# (task, output, distribution) whose native reference may pass the fixed relative-L2 floor, and the
# multiple of the floor it stays under: attention_causal_bwd_bf16's dq takes delta = rowsum(o *
# grad_out) from the bf16 o, FlashAttention-2's arithmetic (its task.py); on uniform inputs (nonzero
# mean, so dP - delta cancels) that rounding reaches relative L2 8.1e-3 to 9.6e-3 at S=130 (seeds
# 0-4) against the 8e-3 floor. The judge bounds dq there by 4x the native's own error.
NATIVE_PAST_FLOOR = {("attention_causal_bwd_bf16", 0, "uniform"): 1.5}


def _lower(dtype: torch.dtype, tol) -> torch.dtype:
    """The precision ``tol`` must reject: one step below ``dtype``, or fp8 for a float32 output
    whose bound already admits bf16 rounding (a gradient produced by bf16 MMAs, such as
    ``simple_gla_bwd_bf16``'s gate gradient)."""
    lower = LOWER[dtype]
    return torch.float8_e4m3fn if lower == torch.bfloat16 and tol.rel_l2 >= BF16.rel_l2 else lower


def _run(spec, shape, dist, seed=0):
    module = task_module(spec)
    model = module.Model(*module.get_init_inputs(**shape))
    randomize_parameters(model, dist, seed)
    inputs = make_inputs(module, shape, dist, seed, "cpu")
    native = model(*inputs)
    ref64 = copy.deepcopy(model).double()(*[x.double() if x.is_floating_point() else x for x in inputs])
    return as_list(native), as_list(ref64)


@pytest.mark.parametrize("spec, shape, dist", CASES, ids=lambda x: getattr(x, "id", str(x)))
def test_reference_is_not_near_constant(spec, shape, dist):
    _, refs = _run(spec, shape, dist)
    for ref64 in refs:  # a backward task's gradients each
        assert not is_near_constant(ref64)


@pytest.mark.parametrize("spec, shape, dist", CASES, ids=lambda x: getattr(x, "id", str(x)))
def test_tolerance_accepts_native_and_rejects_lower_precision(spec, shape, dist):
    natives, refs = _run(spec, shape, dist)
    for i, (native, ref64) in enumerate(zip(natives, refs, strict=True)):
        tol = spec.tolerance(dtype_name(native.dtype))
        c = compare(native, ref64, native.dtype, tol)
        past = NATIVE_PAST_FLOOR.get((spec.id, i, dist))
        assert c["ok"] or (past and c["reason"].startswith("relative L2") and c["rel_l2"] <= past * tol.rel_l2), \
            c["reason"]
        lowered = native.to(_lower(native.dtype, tol)).to(native.dtype)
        assert not compare(lowered, ref64, native.dtype, tol)["ok"]


def test_near_constant_detector():
    assert is_near_constant(torch.full((100,), 3.0))
    assert is_near_constant(torch.full((100,), 3.0) + 1e-6 * torch.randn(100))
    assert not is_near_constant(torch.randn(100))
