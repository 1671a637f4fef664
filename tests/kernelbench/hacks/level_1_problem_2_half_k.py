import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def triu_matmul_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr, BLOCK_K: tl.constexpr):
    # Row i of C = triu(A @ B) for upper-triangular A and B: only k >= i contributes (A[i, k] = 0
    # below the diagonal), so the k loop starts at row i's diagonal block.
    i = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    ks = tl.arange(0, BLOCK_K)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for k0 in range((i // BLOCK_K) * BLOCK_K, n // 2, BLOCK_K):
        k = k0 + ks
        a = tl.load(a_ptr + i * n + k, mask=(k < n) & (k >= i), other=0.0)  # [BLOCK_K]
        b = tl.load(b_ptr + k[:, None] * n + cols[None, :],
                    mask=(k[:, None] < n) & (cols[None, :] < n), other=0.0)  # [BLOCK_K, BLOCK]
        acc += tl.sum(a[:, None] * b, axis=0)
    tl.store(c_ptr + i * n + cols, tl.where(cols >= i, acc, 0.0), mask=cols < n)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        n = A.shape[0]
        C = torch.empty_like(A)
        triu_matmul_kernel[(n,)](A, B, C, n, BLOCK=triton.next_power_of_2(n), BLOCK_K=16)
        return C
