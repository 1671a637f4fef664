import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sym_matmul_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK_J: tl.constexpr, BLOCK_K: tl.constexpr):
    # B is symmetric, so column j of B is row j: C[i, j] = sum_k A[i, k] * B[j, k], read row-wise.
    i = tl.program_id(0)
    js = tl.arange(0, BLOCK_J)
    ks = tl.arange(0, BLOCK_K)
    acc = tl.zeros([BLOCK_J], dtype=tl.float32)
    for k0 in range(0, n, BLOCK_K):
        kmask = k0 + ks < n
        a = tl.load(a_ptr + i * n + k0 + ks, mask=kmask, other=0.0)  # [BLOCK_K]
        b = tl.load(b_ptr + js[:, None] * n + k0 + ks[None, :],
                    mask=(js[:, None] < n) & kmask[None, :], other=0.0)  # [BLOCK_J, BLOCK_K]
        acc += tl.sum(b * a[None, :], axis=1)
    tl.store(c_ptr + i * n + js, acc, mask=js < n)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        n = A.shape[0]
        C = torch.empty_like(A)
        sym_matmul_kernel[(n,)](A, B, C, n, BLOCK_J=triton.next_power_of_2(n), BLOCK_K=32)
        return C
