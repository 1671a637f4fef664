"""Warp-specialized bf16 GEMM (producer/consumer warp groups): ``c = a @ b``.

Strategy: mark the K loop ``tl.range(..., warp_specialize=True)`` so the compiler splits it into a
producer warp group that only issues TMA loads into a shared-memory ring and consumer warp groups
that only wait on mbarriers and run async wgmma, with registers rebalanced (setmaxnreg) toward the
consumers; loads and MMAs then overlap without either side's latency stalling the other.

Inputs ``a [M, K]`` and ``b [K, N]`` are bfloat16 with a contiguous last dimension and 16-byte
aligned base and row stride (K and N multiples of 8 for contiguous tensors). The output is a
contiguous bfloat16 ``[M, N]`` tensor accumulated in float32. One program computes one
``[BLOCK_M, BLOCK_N]`` tile, tiles in grouped order. Descriptors are built on the device
(``tl.make_tensor_descriptor``; workspace from ``triton.set_allocator``): Hopper's warp
specialization splits the 128-row tile between two consumer groups and must re-derive the TMA box,
which a host-built descriptor does not allow (triton issue 11587). ``naive.py`` launches this
kernel with ``WARP_SPECIALIZE=False``.

Example::

    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    c = matmul(a, b)  # [8192, 8192] bf16
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

# 128x256x64 tiles in 3 stages (144 KB of A/B ring plus a 64 KB C box for the TMA store).
BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, NUM_STAGES = 128, 256, 64, 8, 3
# On Hopper, triton's warp specialization (the hopper NVGPUWarpSpecialization pass, triton >= 3.5)
# treats num_warps as the size of one warp group: num_warps=4 yields a producer plus two 4-warp
# consumer groups (64 rows each, 12 warps in all), as in the tutorials' Hopper attention kernel;
# with num_warps=8 triton 3.4 applied no specialization (triton issue 8260). The unspecialized
# kernel needs 8 warps to hold the 128x256 fp32 accumulator without spilling.
WS_NUM_WARPS, PLAIN_NUM_WARPS = 4, 8
TMA_ALIGN_BYTES = 16


@triton.jit
def _ws_matmul_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_am, stride_bk, stride_cm,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    NUM_STAGES: tl.constexpr, WARP_SPECIALIZE: tl.constexpr,
):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[stride_am, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[stride_bk, 1], block_shape=[BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[stride_cm, 1], block_shape=[BLOCK_M, BLOCK_N])

    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    first_pid_m = (pid // num_pid_in_group) * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (pid % num_pid_in_group) % group_size_m
    pid_n = (pid % num_pid_in_group) // group_size_m
    off_m = pid_m * BLOCK_M
    off_n = pid_n * BLOCK_N

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BLOCK_K), num_stages=NUM_STAGES, warp_specialize=WARP_SPECIALIZE):
        a = a_desc.load([off_m, k * BLOCK_K])  # [BM, BK]
        b = b_desc.load([k * BLOCK_K, off_n])  # [BK, BN]
        acc = tl.dot(a, b, acc)
    c_desc.store([off_m, off_n], acc.to(c_ptr.dtype.element_ty))  # [BM, BN]


def use_workspace_on(device: torch.device) -> None:
    """Let device-side descriptors take their per-program workspace from torch on ``device``."""
    triton.set_allocator(lambda size, alignment, stream: torch.empty(size, dtype=torch.int8, device=device))


def launch(a: torch.Tensor, b: torch.Tensor, warp_specialize: bool) -> torch.Tensor:
    """Run the device-descriptor TMA GEMM with or without warp specialization of its K loop."""
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"expected a [M, K] and b [K, N], got {tuple(a.shape)} and {tuple(b.shape)}")
    if a.dtype != torch.bfloat16 or b.dtype != torch.bfloat16:
        raise TypeError(f"expected bfloat16 inputs, got {a.dtype} and {b.dtype}")
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty((m, n), dtype=a.dtype, device=a.device)
    for name, t in (("a", a), ("b", b), ("c", c)):
        if t.stride(1) != 1 or (t.stride(0) * t.element_size()) % TMA_ALIGN_BYTES or t.data_ptr() % TMA_ALIGN_BYTES:
            raise ValueError(
                f"{name} {tuple(t.shape)} with strides {t.stride()} cannot back a TMA descriptor: the last "
                f"dimension must be contiguous and the base and row stride {TMA_ALIGN_BYTES}-byte aligned"
            )
    use_workspace_on(a.device)
    grid = (triton.cdiv(m, BLOCK_M) * triton.cdiv(n, BLOCK_N),)
    _ws_matmul_kernel[grid](
        a, b, c, m, n, k, a.stride(0), b.stride(0), c.stride(0),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=GROUP_M,
        NUM_STAGES=NUM_STAGES, WARP_SPECIALIZE=warp_specialize,
        num_stages=NUM_STAGES, num_warps=WS_NUM_WARPS if warp_specialize else PLAIN_NUM_WARPS,
    )
    return c


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a [M, K] bf16 @ b [K, N] bf16 -> [M, N] bf16``, fp32 accumulation, warp-specialized K loop."""
    return launch(a, b, warp_specialize=True)
