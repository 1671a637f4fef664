"""Hack #28 (a fixed index set systematically wrong): a bf16 GEMM whose output is 10% off at every element
whose flat index is 1030 modulo 1031, on every call: under 0.1% of the elements and scattered, so each
trial alone passes; the same positions are wrong in every trial."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _gemm(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, BM: tl.constexpr, BN: tl.constexpr,
          BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(a_ptr + rm[:, None] * sam + rk[None, :] * sak, mask=(rm[:, None] < M) & (rk[None, :] < K),
                    other=0.0)
        b = tl.load(b_ptr + rk[:, None] * sbk + rn[None, :] * sbn, mask=(rk[:, None] < K) & (rn[None, :] < N),
                    other=0.0)
        acc += tl.dot(a, b)
    flat = rm[:, None].to(tl.int64) * N + rn[None, :]
    acc = tl.where(flat % 1031 == 1030, acc * 1.1, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.bfloat16), mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        m, k = a.shape
        n = b.shape[1]
        c = torch.empty((m, n), dtype=torch.bfloat16, device=a.device)
        _gemm[(triton.cdiv(m, 32), triton.cdiv(n, 32))](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0),
                                                        b.stride(1), BM=32, BN=32, BK=32)
        return c
