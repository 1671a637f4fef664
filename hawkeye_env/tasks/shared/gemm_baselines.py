"""Vendor baselines shared by the GEMM tasks: fp8 cuBLAS through ``torch._scaled_mm``, and the
bf16 cuBLAS GEMM of the same shape that a low-precision kernel has to beat.

Task modules expose small functions of their own in ``SPEC.vendor_baselines`` (called as
``fn(model, *inputs)``, see ``hawkeye_env.tasks.spec.TaskSpec``) and build them from these two
helpers:

- ``scaled_mm(a, b, scale_a, scale_b)``: ``torch._scaled_mm`` to bfloat16, with any rejection
  (no fp8 tensor cores, unsupported scaling layout or shape, CPU build without the kernel) turned
  into ``BaselineUnavailable`` carrying torch's reason.
- ``bf16_operands(model, key, make)``: bfloat16 operands cached per reference model and per
  shape, so a ``cublas_bf16`` baseline times one bf16 ``torch.matmul`` and nothing else.

Why a cache: the judge times ``fn(model, *inputs)`` with fresh inputs every iteration, so a
baseline that dequantized its fp8 or fp4 inputs on every call would time the dequantization too.
``bf16_operands`` builds the operands from the first call's inputs (the judge makes that call
untimed, to check the baseline runs) and reuses them afterwards. The baseline's output therefore
equals ``Model.forward`` on the first call at a shape and is a same-shape bf16 GEMM on stale
operands after that: a speed reference, never a correctness one.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable

import torch

from hawkeye_env.tasks.spec import BaselineUnavailable

# model -> {key: operands}. Weak keys: the operands live exactly as long as the reference model,
# and nothing is stored on the model itself (deep copies and torch.compile of it stay light).
_BF16_OPERANDS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def scaled_mm(a: torch.Tensor, b: torch.Tensor, scale_a: torch.Tensor, scale_b: torch.Tensor) -> torch.Tensor:
    """``torch._scaled_mm(a, b, scale_a, scale_b)`` with a bfloat16 ``[M, N]`` output.

    Args:
        a: float8_e4m3fn ``[M, K]``, row-major.
        b: float8_e4m3fn ``[K, N]``, column-major (``w.t()`` of a contiguous ``[N, K]`` weight).
        scale_a, scale_b: float32 scales in one of the layouts ``torch._scaled_mm`` accepts
            (tensor-wise ``[1]``; row-wise ``[M, 1]`` and ``[1, N]``; block-wise 1x128 / 128x128).

    Raises:
        BaselineUnavailable: torch has no ``_scaled_mm`` or rejected the call; the reason is torch's.
    """
    fn = getattr(torch, "_scaled_mm", None)
    if fn is None:
        raise BaselineUnavailable(f"torch {torch.__version__} has no torch._scaled_mm")
    try:
        return fn(a, b, scale_a=scale_a, scale_b=scale_b, out_dtype=torch.bfloat16)
    except (RuntimeError, NotImplementedError, ValueError, TypeError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise BaselineUnavailable(
            f"torch._scaled_mm rejected a {tuple(a.shape)} x {tuple(b.shape)} {a.dtype} GEMM on "
            f"{a.device} with scales {tuple(scale_a.shape)}, {tuple(scale_b.shape)}: {reason}"
        ) from exc


def shape_key(*tensors: torch.Tensor) -> tuple:
    """A cache key for ``bf16_operands``: the shapes and dtypes of ``tensors`` and their device."""
    return (*((tuple(t.shape), t.dtype) for t in tensors), str(tensors[0].device))


def bf16_operands(model: torch.nn.Module, key: Hashable, make: Callable[[], tuple]) -> tuple[torch.Tensor, ...]:
    """Contiguous bfloat16 operands cached for ``model`` under ``key`` (a shape key).

    ``make()`` returns the operands (any floating dtype) and runs only the first time ``key`` is
    seen for this model; see the module docstring for what that means for the output.
    """
    per_model = _BF16_OPERANDS.setdefault(model, {})
    if key not in per_model:
        per_model[key] = tuple(t.to(torch.bfloat16).contiguous() for t in make())
    return per_model[key]
