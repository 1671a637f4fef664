"""Solution of ``epilogue_fusion``: ``out = gelu_tanh(a @ b + bias)`` in one bfloat16 GEMM kernel.

Strategy: the bias add and the GELU run on the float32 accumulator tile in registers, right before
the single bfloat16 store, so ``a @ b`` never round-trips through DRAM.

The main loop is the ``gemm_bf16`` expert's: ``tl.dot`` tiles with a float32 accumulator, grouped
tile order (``GROUP_M`` rows of tiles share B in L2), rows and columns wrapped modulo M and N so
edge tiles load without masks, K masked, stores masked. GELU uses the tanh form written as
``x * sigmoid(2u)`` (``0.5 * (1 + tanh(u)) == sigmoid(2u)``), which saturates without NaN.

Shapes and dtypes: ``a`` bfloat16 ``[M, K]``, ``b`` bfloat16 ``[K, N]``, ``bias`` bfloat16 ``[N]``
(any strides); returns a contiguous bfloat16 ``[M, N]`` tensor.

Example::

    import torch
    from units.epilogue_fusion.kernel import linear_gelu
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16) / 64
    bias = torch.randn(4096, device="cuda", dtype=torch.bfloat16)
    y = linear_gelu(a, b, bias)  # == F.gelu(a @ b + bias, approximate="tanh")
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from units.grouped_tile_order.kernel import grouped_tile

# The gemm_bf16 expert's Hopper configuration (hawkeye_env/tasks/gemm_bf16/solution.py).
BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M = 128, 256, 64, 8
NUM_STAGES, NUM_WARPS = 3, 8
TWO_SQRT_2_OVER_PI = tl.constexpr(1.5957691216057308)  # 2 * sqrt(2 / pi)
GELU_CUBIC = tl.constexpr(0.044715)


@triton.jit
def _linear_gelu_kernel(
    a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_bias, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    pid_m, pid_n = grouped_tile(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)

    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M  # [BM]
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N  # [BN]
    offs_k = tl.arange(0, BLOCK_K)  # [BK]
    p_a = a_ptr + offs_am[:, None].to(tl.int64) * stride_am + offs_k[None, :] * stride_ak  # [BM, BK]
    p_b = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :].to(tl.int64) * stride_bn  # [BK, BN]

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)  # [BM, BN]
    for k in range(tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        b_a = tl.load(p_a, mask=offs_k[None, :] < k_left, other=0.0)  # [BM, BK]
        b_b = tl.load(p_b, mask=offs_k[:, None] < k_left, other=0.0)  # [BK, BN]
        acc = tl.dot(b_a, b_b, acc)
        p_a += BLOCK_K * stride_ak
        p_b += BLOCK_K * stride_bk

    b_bias = tl.load(bias_ptr + offs_bn * stride_bias).to(tl.float32)  # [BN]
    x = acc + b_bias[None, :]  # [BM, BN]
    u2 = TWO_SQRT_2_OVER_PI * (x + GELU_CUBIC * x * x * x)
    y = x / (1.0 + tl.exp(-u2))

    offs_cm = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)  # [BM]
    offs_cn = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)  # [BN]
    p_c = c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn  # [BM, BN]
    tl.store(p_c, y.to(c_ptr.dtype.element_ty), mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


def linear_gelu(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """``gelu_tanh(a @ b + bias)`` for bfloat16 ``a [M, K]``, ``b [K, N]``, ``bias [N]``."""
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty((m, n), dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(m, BLOCK_M) * triton.cdiv(n, BLOCK_N),)
    _linear_gelu_kernel[grid](
        a, b, bias, c, m, n, k,
        a.stride(0), a.stride(1), b.stride(0), b.stride(1), bias.stride(0), c.stride(0), c.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=GROUP_M,
        num_stages=NUM_STAGES, num_warps=NUM_WARPS,
    )
    return c
