"""Honest kernels, one per gap between the GPU and Triton's CPU interpreter
(``hawkeye_env/judge/sandboxed/common/interpreter/gaps.py``), each checked against torch by its ``case_*`` function.

Imported only after ``install_interpreter_fixes`` (as a candidate's module is): the
``from ...libdevice import tanh`` below binds at import. ``python -m tests.judge.interpreter_gap_kernels``
runs every case in a fresh interpreter without the fixes and prints ``{case: error or null}``.
"""

from __future__ import annotations

import json
import math

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice
from triton.language.extra.cuda import libdevice as cuda_libdevice
from triton.language.extra.libdevice import tanh as libdevice_tanh

N = 300  # not a multiple of the blocks below: masked tails are exercised
_exp = tl.exp
_maximum = tl.maximum


@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128}, num_warps=8)],
                 key=["n"], reset_to_zero=["out_ptr"])
@triton.jit
def _scale_autotuned(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.atomic_add(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


@triton.heuristics({"EVEN": lambda args: args["n"] % 64 == 0})
@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 32})], key=["n"])
@triton.jit
def _heuristic_over_autotune(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        x = tl.load(x_ptr + offs)
    else:
        x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x * 3.0, mask=offs < n)


@triton.jit
def _libdevice_forms(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out[k, :] for k = tanh (four import forms), erf, pow, rsqrt, exp, log1p, isnan of x (fp32)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    tl.store(out_ptr + offs, libdevice.tanh(x), mask=mask)
    tl.store(out_ptr + n + offs, cuda_libdevice.tanh(x), mask=mask)
    tl.store(out_ptr + 2 * n + offs, libdevice_tanh(x), mask=mask)
    tl.store(out_ptr + 3 * n + offs, tl.extra.cuda.libdevice.tanh(x), mask=mask)
    tl.store(out_ptr + 4 * n + offs, libdevice.erf(x), mask=mask)
    tl.store(out_ptr + 5 * n + offs, libdevice.pow(tl.abs(x), 1.5), mask=mask)
    tl.store(out_ptr + 6 * n + offs, libdevice.rsqrt(tl.abs(x) + 0.5), mask=mask)
    tl.store(out_ptr + 7 * n + offs, libdevice.exp(x), mask=mask)
    tl.store(out_ptr + 8 * n + offs, libdevice.log1p(tl.abs(x)), mask=mask)
    tl.store(out_ptr + 9 * n + offs, libdevice.isnan(x).to(tl.float32), mask=mask)


@triton.jit
def _gelu_bf16(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Tanh-approximated GELU of a bf16 vector, computed in fp32 with libdevice, stored bf16."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n).to(tl.float32)
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    tl.store(out_ptr + offs, (0.5 * x * (1.0 + libdevice.tanh(inner))).to(tl.bfloat16), mask=offs < n)


@triton.jit
def _add_eps(x_ptr, out_ptr, n, eps, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n).to(tl.float32)
    tl.store(out_ptr + offs, (x + eps.to(tl.float32)).to(out_ptr.dtype.element_ty), mask=offs < n)


@triton.jit
def _aliased_builtins(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n).to(tl.float32)
    tl.store(out_ptr + offs, _maximum(_exp(x), 1.5).to(out_ptr.dtype.element_ty), mask=offs < n)


def _plus_one_body(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1.0, mask=offs < n)


_plus_one = triton.jit(_plus_one_body)


def _x(dtype=torch.float32) -> torch.Tensor:
    return torch.randn(N, generator=torch.Generator().manual_seed(0)).to(dtype)


def case_autotune() -> None:
    x = _x()
    out = torch.full_like(x, 7.0)  # reset_to_zero clears it before the launch, as after a GPU benchmark
    _scale_autotuned[lambda meta: (triton.cdiv(N, meta["BLOCK"]),)](x, out, N)
    torch.testing.assert_close(out, x * 2)


def case_heuristics_over_autotune() -> None:
    x = _x()
    out = torch.empty_like(x)
    _heuristic_over_autotune[lambda meta: (triton.cdiv(N, meta["BLOCK"]),)](x, out, N)
    torch.testing.assert_close(out, x * 3)


def case_libdevice() -> None:
    x = _x()
    x[5] = math.nan
    out = torch.empty(10, N)
    _libdevice_forms[(triton.cdiv(N, 128),)](x, out, N, BLOCK=128)
    a = x.abs()
    expected = [torch.tanh(x)] * 4 + [torch.erf(x), a.pow(1.5), torch.rsqrt(a + 0.5), torch.exp(x),
                                      torch.log1p(a), torch.isnan(x).float()]
    for row, want in zip(out, expected):
        torch.testing.assert_close(row, want, rtol=1e-6, atol=1e-6, equal_nan=True)


def case_libdevice_bf16() -> None:
    x = _x(torch.bfloat16)
    out = torch.empty_like(x)
    _gelu_bf16[(triton.cdiv(N, 128),)](x, out, N, BLOCK=128)
    torch.testing.assert_close(out, torch.nn.functional.gelu(x.float(), approximate="tanh").bfloat16())


def case_float_scalar() -> None:
    for dtype in (torch.float32, torch.bfloat16):
        x = _x(dtype)
        out = torch.empty_like(x)
        _add_eps[(triton.cdiv(N, 128),)](x, out, N, 0.25, BLOCK=128)
        torch.testing.assert_close(out, (x.float() + 0.25).to(dtype))


def case_module_aliases() -> None:
    for dtype in (torch.float32, torch.bfloat16):
        x = _x(dtype)
        out = torch.empty_like(x)
        _aliased_builtins[(triton.cdiv(N, 128),)](x, out, N, BLOCK=128)
        torch.testing.assert_close(out, torch.clamp(torch.exp(x.float()), min=1.5).to(dtype))


def case_jit_by_call() -> None:
    x = _x()
    out = torch.empty_like(x)
    _plus_one[(triton.cdiv(N, 128),)](x, out, N, BLOCK=128)
    torch.testing.assert_close(out, x + 1)


CASES = {name.removeprefix("case_"): fn for name, fn in dict(globals()).items() if name.startswith("case_")}

if __name__ == "__main__":
    errors = {}
    for name, fn in CASES.items():
        try:
            fn()
            errors[name] = None
        except Exception as exc:  # every failure is the finding, reported by name
            errors[name] = f"{type(exc).__name__}: {exc}"[:300]
    print(json.dumps(errors))
