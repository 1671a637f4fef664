"""What a standby worker loads before its candidate arrives (``standby.py``).

Everything a fresh worker used to pay inside its candidate's time that trusted code can pay
earlier: the torch modules the judge's first calls import (``torch._dynamo`` and
``torch._inductor`` behind ``use_deterministic_algorithms``, the reference ops behind the input
builder's meta-device probe), one tiny Triton kernel (Triton's runtime, driver helpers and
launcher; the interpreter on CPU), and on a GPU the CUDA context, the cuBLAS GEMMs the float64
reference and the baselines use, and the random-number, cast and reduction kernels the input
builder and the comparison run first. On CPU the imports were 1.1 s of a 1.3 s worker job for
``gemm_bf16`` (cProfile through ``HAWKEYE_PROFILE_DIR``); on the H200 verdicts showed 2.9 s of
input building and 2.3 s of first candidate call (BENCHMARKS.md, runs 5-7), measured before the
imports were part of the warm-up.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

WARM_N = 256


@triton.jit
def _scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


def warm_up(device: str) -> None:
    """Run the warm-up kernels on ``device`` and check their result; frees what they allocated.

    Raises ``RuntimeError`` when the tiny kernel computes a wrong value (a broken GPU or
    toolchain): the standby is then discarded and the candidate gets a fresh worker.
    """
    # Imports a fresh worker otherwise pays inside its candidate's first call: enabling
    # deterministic algorithms imports torch._dynamo and torch._inductor, and a meta-device draw
    # (the input builder's shape probe) torch._refs; 1.1 s of a 1.3 s CPU worker job for
    # gemm_bf16 (cProfile through HAWKEYE_PROFILE_DIR).
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.use_deterministic_algorithms(False)
    with torch.device("meta"):
        torch.randn(2, 2)
    x = torch.arange(WARM_N, dtype=torch.float32, device=device)
    y = torch.empty_like(x)
    _scale_kernel[(triton.cdiv(WARM_N, 128),)](x, y, WARM_N, BLOCK=128)
    if not torch.equal(y, 2 * x):
        raise RuntimeError("warm-up kernel computed a wrong result")
    if device == "cuda":
        for dtype in (torch.bfloat16, torch.float32, torch.float64):
            a = torch.ones(64, 64, dtype=dtype, device=device)
            (a @ a).sum().item()
        g = torch.Generator(device=device).manual_seed(0)
        r = torch.randn(WARM_N, generator=g, device=device) + torch.rand(WARM_N, generator=g, device=device)
        for dtype in (torch.bfloat16, torch.float16, torch.float64):
            r.to(dtype).double().abs().max().item()
        torch.cuda.synchronize()
        del x, y, a, r
        torch.cuda.empty_cache()


__all__ = ["warm_up"]
