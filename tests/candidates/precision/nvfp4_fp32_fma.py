"""Precision shortcut for ``nvfp4_gemm_bf16``: correct outputs, no tensor cores at all.

Each e2m1 code is decoded to float32 in registers (sign, exponent and mantissa bits; times its e4m3
block scale) and the product is a broadcast multiply summed over K (``tl.sum`` of ``a * b``): float32
FMA on the CUDA cores, exact enough to match the reference, at a fraction of the tensor cores' rate.
On Hopper an FP4 task's kernels must feed its decoded values to matrix instructions
(``TaskSpec.mma_operands``: fp8 or 16-bit operands); the verdict's instruction evidence must flag
this kernel, which issues none (``parent/decide/instructions.py``).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from torch import nn

BLOCK_M, BLOCK_N, BLOCK_K = 16, 32, 16  # BLOCK_K = one NVFP4 scale group


@triton.jit
def _fp4_fma_gemm(a_ptr, p_ptr, s_ptr, t_ptr, c_ptr, M, N, K, s_am, s_ak, s_pk, s_pn, s_sk, s_sn, s_cm, s_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)  # [BM]
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)  # [BN]
    rk = tl.arange(0, BLOCK_K)  # [BK]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * s_am + ks[None, :] * s_ak, mask=(rm[:, None] < M) & (ks[None, :] < K),
                    other=0.0).to(tl.float32)  # [BM, BK]
        mask_b = (ks[:, None] < K) & (rn[None, :] < N)
        packed = tl.load(p_ptr + (ks // 2)[:, None] * s_pk + rn[None, :] * s_pn, mask=mask_b, other=0)  # [BK, BN]
        code = tl.where((ks % 2 == 0)[:, None], packed & 0xF, packed >> 4).to(tl.int32)  # [BK, BN]
        mag = code & 7
        exponent = (mag >> 1).to(tl.float32)
        value = tl.where(mag < 2, mag.to(tl.float32) * 0.5, (1.0 + 0.5 * (mag & 1).to(tl.float32))
                         * tl.exp2(exponent - 1.0))
        value = tl.where(code >= 8, -value, value)
        scale = tl.load(s_ptr + (ks // 16)[:, None] * s_sk + rn[None, :] * s_sn, mask=mask_b,
                        other=0.0).to(tl.float32)  # [BK, BN]
        b = value * scale  # [BK, BN] float32
        acc += tl.sum(a[:, :, None] * b[None, :, :], axis=1)  # the shortcut: float32 FMA, no matrix instruction
    acc = acc * tl.load(t_ptr)
    tl.store(c_ptr + rm[:, None] * s_cm + rn[None, :] * s_cn, acc.to(tl.bfloat16),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b_packed: torch.Tensor, b_scales: torch.Tensor,
                b_tensor_scale: torch.Tensor) -> torch.Tensor:
        m, k = a.shape
        n = b_packed.shape[1]
        c = torch.empty((m, n), dtype=torch.bfloat16, device=a.device)
        grid = (triton.cdiv(m, BLOCK_M), triton.cdiv(n, BLOCK_N))
        _fp4_fma_gemm[grid](a, b_packed, b_scales, b_tensor_scale, c, m, n, k, a.stride(0), a.stride(1),
                            b_packed.stride(0), b_packed.stride(1), b_scales.stride(0), b_scales.stride(1),
                            c.stride(0), c.stride(1), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
                            num_warps=4, num_stages=2)
        return c
