"""Expert Triton solution for ``rmsnorm_bwd_bf16``: RMSNorm backward, ``(dx, dweight)`` of bfloat16
``x [M, N]`` and ``grad_out [M, N]`` with ``weight [N]``.

Two kernels, the usual shape of a norm backward:

1. ``_rmsnorm_bwd_rows_kernel``: a persistent grid of ``P`` programs (a few per SM), each owning a
   contiguous block of rows. Per row it loads ``x`` and ``grad_out`` once, recomputes ``rstd`` in
   float32, stores ``dx = rstd * (g - xhat * mean(g * xhat))`` in bfloat16 and adds
   ``grad_out * xhat`` into a float32 ``[N]`` accumulator held in registers. At the end it writes
   that accumulator as its row of a float32 ``[P, N]`` partial-sum buffer.
2. ``_dweight_reduce_kernel``: one program per column block sums the ``P`` partial rows and
   stores ``dweight`` in bfloat16.

The partials cost ``P * N * 4`` bytes each way, under 2% of the row traffic at ``M = 16384``, and
the sum is deterministic (no atomics).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from torch import nn

PROGRAMS_PER_SM = 2
CPU_PROGRAMS = 4  # the interpreter's grid: small, but fewer than the rows so stage 2 has work


@triton.jit
def _rmsnorm_bwd_rows_kernel(
    x_ptr, dy_ptr, w_ptr, dx_ptr, part_ptr, n_rows, n_cols, rows_per_prog, eps,
    stride_xm, stride_xn, stride_dym, stride_dyn, stride_w, stride_dxm, stride_pm,
    BLOCK_N: tl.constexpr,
):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)  # [BLOCK_N]
    col_ok = cols < n_cols
    w = tl.load(w_ptr + cols * stride_w, mask=col_ok, other=0.0).to(tl.float32)
    dw = tl.zeros([BLOCK_N], dtype=tl.float32)
    first = pid.to(tl.int64) * rows_per_prog
    for i in range(0, rows_per_prog):
        row = first + i
        ok = cols < tl.where(row < n_rows, n_cols, 0)  # [BLOCK_N]: none past the last row
        x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=ok, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + row * stride_dym + cols * stride_dyn, mask=ok, other=0.0).to(tl.float32)
        rstd = tl.rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
        xhat = x * rstd
        g = dy * w
        c = tl.sum(g * xhat, axis=0) / n_cols
        tl.store(dx_ptr + row * stride_dxm + cols, ((g - xhat * c) * rstd).to(tl.bfloat16), mask=ok)
        dw += dy * xhat
    tl.store(part_ptr + pid * stride_pm + cols, dw, mask=col_ok)


@triton.jit
def _dweight_reduce_kernel(part_ptr, dw_ptr, n_parts, n_cols, stride_pm,
                           BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)  # [BLOCK_C]
    col_ok = cols < n_cols
    acc = tl.zeros([BLOCK_C], dtype=tl.float32)
    for p0 in range(0, n_parts, BLOCK_P):
        parts = p0 + tl.arange(0, BLOCK_P)  # [BLOCK_P]
        ok = (parts[:, None] < n_parts) & col_ok[None, :]
        block = tl.load(part_ptr + parts[:, None] * stride_pm + cols[None, :], mask=ok, other=0.0)
        acc += tl.sum(block, axis=0)  # [BLOCK_C]
    tl.store(dw_ptr + cols, acc.to(tl.bfloat16), mask=col_ok)


def _programs(device: torch.device, rows: int) -> int:
    if device.type == "cuda":
        wanted = PROGRAMS_PER_SM * torch.cuda.get_device_properties(device).multi_processor_count
    else:
        wanted = CPU_PROGRAMS
    return max(1, min(wanted, rows))


class ModelNew(nn.Module):
    def __init__(self, hidden_size: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden_size, dtype=torch.bfloat16))

    def forward(self, x: torch.Tensor, grad_out: torch.Tensor):
        m, n = x.shape
        w = self.weight
        rows_per_prog = triton.cdiv(m, _programs(x.device, m))
        n_progs = triton.cdiv(m, rows_per_prog)
        dx = torch.empty((m, n), dtype=torch.bfloat16, device=x.device)
        partial = torch.empty((n_progs, n), dtype=torch.float32, device=x.device)
        dw = torch.empty((n,), dtype=torch.bfloat16, device=x.device)
        block_n = triton.next_power_of_2(n)
        _rmsnorm_bwd_rows_kernel[(n_progs,)](
            x, grad_out, w, dx, partial, m, n, rows_per_prog, self.eps,
            x.stride(0), x.stride(1), grad_out.stride(0), grad_out.stride(1), w.stride(0), dx.stride(0),
            partial.stride(0), BLOCK_N=block_n, num_warps=8 if block_n >= 2048 else 4,
        )
        block_c = 128
        _dweight_reduce_kernel[(triton.cdiv(n, block_c),)](
            partial, dw, n_progs, n, partial.stride(0), BLOCK_P=32, BLOCK_C=block_c, num_warps=4,
        )
        return dx, dw
