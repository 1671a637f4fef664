"""Expert Triton solution for ``layernorm_bwd_bf16``: LayerNorm backward, ``(dx, dweight, dbias)``
of bfloat16 ``x [M, N]`` and ``grad_out [M, N]`` with ``weight`` and ``bias [N]``.

Stage 1, ``_layernorm_bwd_rows_kernel``: a persistent grid of ``P`` programs (a few per SM), each
owning a contiguous block of rows. Per row it loads ``x`` and ``grad_out`` once, recomputes the
mean and ``rstd`` in float32 (centred variance, as the forward), stores
``dx = rstd * (g - mean(g) - xhat * mean(g * xhat))`` in bfloat16, and adds ``grad_out * xhat``
and ``grad_out`` into two float32 ``[N]`` register accumulators, written at the end as its rows of
a float32 ``[2, P, N]`` partial-sum buffer.

Stage 2, ``_param_grad_reduce_kernel``: a ``(column blocks, 2)`` grid; program ``(c, j)`` sums the
``P`` partials of column block ``c`` for ``dweight`` (``j = 0``) or ``dbias`` (``j = 1``) and
stores bfloat16. Deterministic: no atomics.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from torch import nn

PROGRAMS_PER_SM = 2
CPU_PROGRAMS = 3  # the interpreter's grid: fewer programs than rows, so stage 2 sums several


@triton.jit
def _layernorm_bwd_rows_kernel(
    x_ptr, dy_ptr, w_ptr, dx_ptr, part_ptr, n_rows, n_cols, rows_per_prog, eps,
    stride_xm, stride_xn, stride_dym, stride_dyn, stride_w, stride_dxm, stride_pj, stride_pm,
    BLOCK_N: tl.constexpr,
):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)  # [BLOCK_N]
    col_ok = cols < n_cols
    w = tl.load(w_ptr + cols * stride_w, mask=col_ok, other=0.0).to(tl.float32)
    dw = tl.zeros([BLOCK_N], dtype=tl.float32)
    db = tl.zeros([BLOCK_N], dtype=tl.float32)
    first = pid.to(tl.int64) * rows_per_prog
    for i in range(0, rows_per_prog):
        row = first + i
        ok = cols < tl.where(row < n_rows, n_cols, 0)  # [BLOCK_N]: none past the last row
        x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=ok, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + row * stride_dym + cols * stride_dyn, mask=ok, other=0.0).to(tl.float32)
        mean = tl.sum(x, axis=0) / n_cols
        xc = tl.where(ok, x - mean, 0.0)
        rstd = tl.rsqrt(tl.sum(xc * xc, axis=0) / n_cols + eps)
        xhat = xc * rstd
        g = dy * w
        g_mean = tl.sum(g, axis=0) / n_cols
        gx_mean = tl.sum(g * xhat, axis=0) / n_cols
        dx = (g - g_mean - xhat * gx_mean) * rstd
        tl.store(dx_ptr + row * stride_dxm + cols, dx.to(tl.bfloat16), mask=ok)
        dw += dy * xhat
        db += dy
    tl.store(part_ptr + pid * stride_pm + cols, dw, mask=col_ok)
    tl.store(part_ptr + stride_pj + pid * stride_pm + cols, db, mask=col_ok)


@triton.jit
def _param_grad_reduce_kernel(part_ptr, dw_ptr, db_ptr, n_parts, n_cols, stride_pj, stride_pm,
                              BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr):
    which = tl.program_id(1)  # 0: dweight, 1: dbias
    cols = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)  # [BLOCK_C]
    col_ok = cols < n_cols
    base = part_ptr + which * stride_pj
    acc = tl.zeros([BLOCK_C], dtype=tl.float32)
    for p0 in range(0, n_parts, BLOCK_P):
        parts = p0 + tl.arange(0, BLOCK_P)  # [BLOCK_P]
        ok = (parts[:, None] < n_parts) & col_ok[None, :]
        acc += tl.sum(tl.load(base + parts[:, None] * stride_pm + cols[None, :], mask=ok, other=0.0), axis=0)
    if which == 0:
        tl.store(dw_ptr + cols, acc.to(tl.bfloat16), mask=col_ok)
    else:
        tl.store(db_ptr + cols, acc.to(tl.bfloat16), mask=col_ok)


class ModelNew(nn.Module):
    def __init__(self, hidden_size: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden_size, dtype=torch.bfloat16))
        self.bias = nn.Parameter(torch.zeros(hidden_size, dtype=torch.bfloat16))

    def forward(self, x: torch.Tensor, grad_out: torch.Tensor):
        m, n = x.shape
        dev, w = x.device, self.weight
        sms = torch.cuda.get_device_properties(dev).multi_processor_count if dev.type == "cuda" else 0
        wanted = PROGRAMS_PER_SM * sms if sms else CPU_PROGRAMS
        rows_per_prog = triton.cdiv(m, max(1, min(wanted, m)))
        n_progs = triton.cdiv(m, rows_per_prog)
        dx = torch.empty((m, n), dtype=torch.bfloat16, device=dev)
        partial = torch.empty((2, n_progs, n), dtype=torch.float32, device=dev)
        dw = torch.empty((n,), dtype=torch.bfloat16, device=dev)
        db = torch.empty((n,), dtype=torch.bfloat16, device=dev)
        block_n = triton.next_power_of_2(n)
        _layernorm_bwd_rows_kernel[(n_progs,)](
            x, grad_out, w, dx, partial, m, n, rows_per_prog, self.eps,
            x.stride(0), x.stride(1), grad_out.stride(0), grad_out.stride(1), w.stride(0), dx.stride(0),
            partial.stride(0), partial.stride(1), BLOCK_N=block_n, num_warps=8 if block_n >= 2048 else 4,
        )
        block_c = 64
        _param_grad_reduce_kernel[(triton.cdiv(n, block_c), 2)](
            partial, dw, db, n_progs, n, partial.stride(0), partial.stride(1), BLOCK_P=16, BLOCK_C=block_c,
            num_warps=4,
        )
        return dx, dw, db
