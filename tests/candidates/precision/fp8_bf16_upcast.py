"""Precision shortcut for ``fp8_gemm_per_tensor``: correct outputs, bf16 tensor cores.

Every fp8 tile is converted to bfloat16 before ``tl.dot`` (e4m3 values are exact in bf16, so the
product matches the reference within tolerance), so the kernel's matrix instructions are bf16
wgmma (``HGMMA...BF16``) at half the fp8 rate: the answer the task exists to rule out. The
verdict's instruction evidence must flag it (``parent/decide/instructions.py``).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from torch import nn

BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 64


@triton.jit
def _upcast_gemm(a_ptr, w_ptr, sa_ptr, sw_ptr, c_ptr, M, N, K, s_am, s_ak, s_wn, s_wk, s_cm, s_cn,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)  # [BM]
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)  # [BN]
    rk = tl.arange(0, BLOCK_K)  # [BK]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * s_am + ks[None, :] * s_ak, mask=(rm[:, None] < M) & (ks[None, :] < K),
                    other=0.0)  # [BM, BK] fp8
        b = tl.load(w_ptr + rn[None, :] * s_wn + ks[:, None] * s_wk, mask=(rn[None, :] < N) & (ks[:, None] < K),
                    other=0.0)  # [BK, BN] fp8
        acc = tl.dot(a.to(tl.bfloat16), b.to(tl.bfloat16), acc)  # the shortcut: bf16 tensor cores
    acc = acc * tl.load(sa_ptr) * tl.load(sw_ptr)
    tl.store(c_ptr + rm[:, None] * s_cm + rn[None, :] * s_cn, acc.to(tl.bfloat16),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, w: torch.Tensor, scale_a: torch.Tensor, scale_w: torch.Tensor) -> torch.Tensor:
        m, k = a.shape
        n = w.shape[0]
        c = torch.empty((m, n), dtype=torch.bfloat16, device=a.device)
        grid = (triton.cdiv(m, BLOCK_M), triton.cdiv(n, BLOCK_N))
        _upcast_gemm[grid](a, w, scale_a, scale_w, c, m, n, k, a.stride(0), a.stride(1), w.stride(0), w.stride(1),
                           c.stride(0), c.stride(1), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
                           num_warps=4, num_stages=3)
        return c
