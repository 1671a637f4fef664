"""Honest ``swiglu_bf16`` written the GPU way: warp counts from a multi-config ``@triton.autotune``
and ``silu`` through CUDA libdevice's ``exp`` (``from triton.language.extra.cuda import libdevice``).
Both failed under Triton's CPU interpreter before ``install_interpreter_fixes``."""

import torch
import triton
import triton.language as tl
from torch import nn
from triton.language.extra.cuda import libdevice

BLOCK = 1024  # bf16 columns per program: 2 KiB per load


@triton.autotune(
    configs=[triton.Config({}, num_warps=4), triton.Config({}, num_warps=8)],
    key=["n_cols"],
)
@triton.jit
def _swiglu_kernel(x_ptr, out_ptr, n_cols, stride_xm, stride_om, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    gate = tl.load(x_ptr + row * stride_xm + cols, mask=mask, other=0.0).to(tl.float32)
    up = tl.load(x_ptr + row * stride_xm + n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    out = gate / (1.0 + libdevice.exp(-gate)) * up
    tl.store(out_ptr + row * stride_om + cols, out.to(tl.bfloat16), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        m, two_n = x.shape
        n = two_n // 2
        out = torch.empty((m, n), dtype=torch.bfloat16, device=x.device)
        _swiglu_kernel[(m, triton.cdiv(n, BLOCK))](x, out, n, x.stride(0), out.stride(0), BLOCK=BLOCK)
        return out
