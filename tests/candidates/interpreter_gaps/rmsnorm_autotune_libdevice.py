"""Honest ``rmsnorm_bf16`` written the GPU way: a multi-config ``@triton.autotune``, CUDA libdevice's
``rsqrt`` and the Python-float ``eps`` cast inside the kernel (``eps.to(tl.float32)``). Each of the
three failed under Triton's CPU interpreter before ``install_interpreter_fixes``."""

import torch
import triton
import triton.language as tl
from torch import nn
from triton.language.extra import libdevice


@triton.autotune(
    configs=[triton.Config({}, num_warps=4), triton.Config({}, num_warps=8)],
    key=["n_cols"],
)
@triton.jit
def _rmsnorm_kernel(x_ptr, w_ptr, out_ptr, n_cols, eps, stride_xm, stride_om, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_xm + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    inv_rms = libdevice.rsqrt(tl.sum(x * x, axis=0) / n_cols + eps.to(tl.float32))
    tl.store(out_ptr + row * stride_om + cols, (x * inv_rms * w).to(tl.bfloat16), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden_size: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden_size, dtype=torch.bfloat16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        m, n = x.shape
        out = torch.empty((m, n), dtype=torch.bfloat16, device=x.device)
        _rmsnorm_kernel[(m,)](x, self.weight, out, n, self.eps, x.stride(0), out.stride(0),
                              BLOCK_N=triton.next_power_of_2(n))
        return out
