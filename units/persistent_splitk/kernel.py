"""Split-K and persistent bf16 GEMMs: ``c = a @ b`` that keep every SM busy.

Strategy: when ``M x N`` has too few output tiles to fill the SMs (M=64, N=4096 gives 32 tiles for
132 SMs), also split K into ``SPLIT_K`` ranges, write float32 partial tiles, and sum them in a fixed
order with a second small kernel (deterministic, no atomics), or (``fused_reduce=True``) in the
tile's last program to finish, counted by one integer atomic per program (deterministic too).

Two callables:

- ``matmul(a, b)``: split-K, for skinny-M / large-K shapes (the unit's solution); with
  ``swap_ab=True`` each tile is computed as ``C^T = B^T A^T`` so a tiny M is the MMA's N side.
- ``matmul_persistent(a, b)``: for large square shapes; launches one program per SM and strides
  each over output tiles (``tile_id = pid, pid + num_programs, ...``) in grouped order, so no
  launch tail and no per-CTA setup per tile.

Inputs ``a [M, K]`` and ``b [K, N]`` are bfloat16 with any strides; outputs are contiguous
bfloat16 ``[M, N]`` tensors accumulated in float32. Row and column indices wrap modulo M and N so
edge tiles load in bounds; K is masked; stores are masked.

Example::

    a = torch.randn(64, 16384, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(16384, 4096, device="cuda", dtype=torch.bfloat16)
    c = matmul(a, b)  # [64, 4096] bf16, 32 tiles x 16 K-splits = 512 programs
    c = matmul_persistent(torch.randn(8192, 8192, ...), torch.randn(8192, 8192, ...))
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from units.grouped_tile_order.kernel import grouped_tile

# Split-K tiles: BLOCK_M = 64 matches skinny M without wasting half a 128-row MMA; 4 stages of
# 64x64 A and 64x128 B tiles take 96 KB, so two CTAs are resident per H200 SM (227 KB). The grid
# aims at CTAS_PER_SM * 132 programs: at M=64, N=4096, K=16384 the H200 ran 0.127 ms with 8 splits
# (2 per SM) and 0.101 ms with 16 (4 per SM, two waves of resident CTAs) (2026-11-30 sweep), as
# more loads in flight raise the weight stream's bandwidth. Each split keeps at least
# MIN_K_TILES_PER_SPLIT K tiles so the 4-stage pipeline reaches steady state.
SPLIT_BLOCK_M, SPLIT_BLOCK_N, SPLIT_BLOCK_K = 64, 128, 64
SPLIT_STAGES, SPLIT_WARPS, CTAS_PER_SM, MIN_K_TILES_PER_SPLIT = 4, 4, 4, 4
REDUCE_BLOCK = 1024
# Persistent tiles: the gemm_bf16 solution's Hopper configuration (128x256x64, 3 stages, 8 warps).
PERSISTENT_BLOCK_M, PERSISTENT_BLOCK_N, PERSISTENT_BLOCK_K, GROUP_M = 128, 256, 64, 8
PERSISTENT_STAGES, PERSISTENT_WARPS = 3, 8
# SM count used under the CPU interpreter, small so the tile loop takes several trips.
CPU_NUM_SMS = 4


@triton.jit
def _splitk_partial_kernel(
    a_ptr, b_ptr, partial_ptr, c_ptr, arrivals_ptr,
    M, N, K, K_PER_SPLIT,
    stride_am, stride_ak, stride_bk, stride_bn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, SWAP_AB: tl.constexpr,
    SPLIT_K: tl.constexpr, FUSED: tl.constexpr,
):
    """fp32 ``partial[s, m, n]`` for one ``[BM, BN]`` output tile over K split ``s``; with ``FUSED``,
    the tile's last split to finish also sums the partials into ``c`` (``_last_split_reduce``).

    ``SWAP_AB``: load the tiles transposed and compute ``C^T = B^T A^T``, ``[BN, BK] x [BK, BM]``,
    so the weight rows fill the MMA's M side (64 per Hopper warpgroup) and the few activation rows
    its N side (>= 16): at BM = 16 that is wgmma m64n16k16 instead of the mma.sync m16n8k16 a
    16-row M side compiles to. The ``[BN, BM]`` accumulator is transposed back before the store.
    """
    pid = tl.program_id(0)
    pid_s = tl.program_id(1)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n
    k_start = pid_s * K_PER_SPLIT
    k_end = min(K, k_start + K_PER_SPLIT)

    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M  # [BM]
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N  # [BN]
    offs_k = k_start + tl.arange(0, BLOCK_K)  # [BK]
    if SWAP_AB:  # A^T [BK, BM] and B^T [BN, BK]
        a_ptrs = a_ptr + offs_k[:, None].to(tl.int64) * stride_ak + offs_am[None, :].to(tl.int64) * stride_am
        b_ptrs = b_ptr + offs_bn[:, None].to(tl.int64) * stride_bn + offs_k[None, :].to(tl.int64) * stride_bk
        acc = tl.zeros((BLOCK_N, BLOCK_M), dtype=tl.float32)
    else:  # A [BM, BK] and B [BK, BN]
        a_ptrs = a_ptr + offs_am[:, None].to(tl.int64) * stride_am + offs_k[None, :].to(tl.int64) * stride_ak
        b_ptrs = b_ptr + offs_k[:, None].to(tl.int64) * stride_bk + offs_bn[None, :].to(tl.int64) * stride_bn
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(k_end - k_start, BLOCK_K)):
        k_mask = offs_k < k_end - k * BLOCK_K  # [BK]
        if SWAP_AB:
            a = tl.load(a_ptrs, mask=k_mask[:, None], other=0.0)  # [BK, BM]
            b = tl.load(b_ptrs, mask=k_mask[None, :], other=0.0)  # [BN, BK]
            acc = tl.dot(b, a, acc)  # [BN, BM]
        else:
            a = tl.load(a_ptrs, mask=k_mask[None, :], other=0.0)  # [BM, BK]
            b = tl.load(b_ptrs, mask=k_mask[:, None], other=0.0)  # [BK, BN]
            acc = tl.dot(a, b, acc)  # [BM, BN]
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    if SWAP_AB:
        acc = tl.trans(acc)  # [BN, BM] -> [BM, BN]

    offs_cm = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)  # [BM]
    offs_cn = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)  # [BN]
    p_ptrs = partial_ptr + pid_s.to(tl.int64) * M * N + offs_cm[:, None] * N + offs_cn[None, :]  # [BM, BN]
    tl.store(p_ptrs, acc, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))
    if FUSED:
        _last_split_reduce(partial_ptr, c_ptr, arrivals_ptr + pid, offs_cm, offs_cn, M, N, BLOCK_M, BLOCK_N, SPLIT_K)


@triton.jit
def _last_split_reduce(partial_ptr, c_ptr, arrival_ptr, offs_cm, offs_cn, M, N,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, SPLIT_K: tl.constexpr):
    """The split-K reduction without a second kernel: each program of a tile, once its partial is
    stored, counts itself in at ``arrival_ptr`` (int32, 0 at launch); the one that arrives last sums
    ``partial[0..SPLIT_K)`` of the tile in index order, as ``_splitk_reduce_kernel`` does (so the
    result is the same bits whichever program is last), stores bf16 ``c`` and puts the count back
    to 0 for the next launch. The barrier orders every thread's partial store before the release of
    the count (one thread performs a scalar atomic); the last program reads the other programs'
    partials past L1 (``.cg``) after the acquire."""
    tl.debug_barrier()
    arrived = tl.atomic_add(arrival_ptr, 1, sem="acq_rel", scope="gpu")
    if arrived == SPLIT_K - 1:
        mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)  # [BM, BN]
        tile = offs_cm[:, None] * N + offs_cn[None, :]  # [BM, BN]
        total = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for s in tl.static_range(SPLIT_K):
            total += tl.load(partial_ptr + s * M * N + tile, mask=mask, other=0.0, cache_modifier=".cg")
        tl.store(c_ptr + tile, total.to(c_ptr.dtype.element_ty), mask=mask)
        tl.atomic_xchg(arrival_ptr, 0, sem="relaxed", scope="gpu")


@triton.jit
def _splitk_reduce_kernel(partial_ptr, c_ptr, MN, SPLIT_K: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)  # [BLOCK]
    mask = offs < MN
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for s in tl.static_range(SPLIT_K):
        acc += tl.load(partial_ptr + s * MN + offs, mask=mask, other=0.0)  # [BLOCK]
    tl.store(c_ptr + offs, acc.to(c_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _persistent_matmul_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K, num_programs,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)  # [BK]
    for tile_id in tl.range(tl.program_id(0), num_pid_m * num_pid_n, num_programs):
        pid_m, pid_n = grouped_tile(tile_id, M, N, BLOCK_M, BLOCK_N, GROUP_M)

        offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M  # [BM]
        offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N  # [BN]
        a_ptrs = a_ptr + offs_am[:, None].to(tl.int64) * stride_am + offs_k[None, :] * stride_ak  # [BM, BK]
        b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :].to(tl.int64) * stride_bn  # [BK, BN]
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(tl.cdiv(K, BLOCK_K)):
            k_left = K - k * BLOCK_K
            a = tl.load(a_ptrs, mask=offs_k[None, :] < k_left, other=0.0)  # [BM, BK]
            b = tl.load(b_ptrs, mask=offs_k[:, None] < k_left, other=0.0)  # [BK, BN]
            acc = tl.dot(a, b, acc)
            a_ptrs += BLOCK_K * stride_ak
            b_ptrs += BLOCK_K * stride_bk

        offs_cm = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)  # [BM]
        offs_cn = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)  # [BN]
        c_ptrs = c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn  # [BM, BN]
        tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


def _check(a: torch.Tensor, b: torch.Tensor) -> None:
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"expected a [M, K] and b [K, N], got {tuple(a.shape)} and {tuple(b.shape)}")
    if a.dtype != torch.bfloat16 or b.dtype != torch.bfloat16:
        raise TypeError(f"expected bfloat16 inputs, got {a.dtype} and {b.dtype}")


def num_sms(device: torch.device) -> int:
    """Streaming multiprocessors of ``device`` (``CPU_NUM_SMS`` off the GPU)."""
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    return CPU_NUM_SMS


def split_k_for(m: int, n: int, k: int, sms: int, *, block_m: int = SPLIT_BLOCK_M, block_n: int = SPLIT_BLOCK_N,
                block_k: int = SPLIT_BLOCK_K) -> int:
    """K-splits that bring the grid to ``CTAS_PER_SM * sms`` programs, each >= 4 K tiles long."""
    tiles = triton.cdiv(m, block_m) * triton.cdiv(n, block_n)
    k_tiles = triton.cdiv(k, block_k)
    split = max(1, min(CTAS_PER_SM * sms // tiles, k_tiles // MIN_K_TILES_PER_SPLIT))
    return no_empty_split(k_tiles, split)


def no_empty_split(k_tiles: int, split: int) -> int:
    """The largest split count <= ``split`` whose equal K ranges of whole tiles are all non-empty."""
    split = max(1, min(split, k_tiles))
    return triton.cdiv(k_tiles, triton.cdiv(k_tiles, split))


def matmul(
    a: torch.Tensor, b: torch.Tensor, *, block_m: int = SPLIT_BLOCK_M, block_n: int = SPLIT_BLOCK_N,
    block_k: int = SPLIT_BLOCK_K, split_k: int | None = None, num_stages: int = SPLIT_STAGES,
    num_warps: int = SPLIT_WARPS, swap_ab: bool = False, fused_reduce: bool = False,
) -> torch.Tensor:
    """``a [M, K] bf16 @ b [K, N] bf16 -> [M, N] bf16``: split-K partials in fp32, then a fixed-order sum.

    The tile configuration defaults to this unit's (the skinny M=64 shape). ``split_k`` fixes the
    number of K ranges (lowered if some range would be empty); by default ``split_k_for`` picks it.
    Any strides are accepted, so an ``nn.Linear`` weight ``w [N, K]`` is passed as ``b = w.t()``.

    ``swap_ab=True`` computes each tile as ``C^T = B^T A^T``: ``block_n`` weight rows become the
    MMA's M side and ``block_m`` (>= 16) rows of ``a`` its N side, for small M (<= 64) where a
    16-row ``[BM, BK] x [BK, BN]`` dot is too short for Hopper's wgmma (64 rows per warpgroup).
    Same tiles, grid, partials and fixed-order reduction; only the partial kernel's dot and loads
    change. H200 figures: the unit README (Variant: swap_ab).

    ``fused_reduce=True`` drops the second kernel: the last program of each tile to finish sums
    the tile's partials (``_last_split_reduce``; same fixed order, same bits), counting arrivals in
    an int32 counter per tile that every launch leaves at 0 (``arrival_counters``). H200 figures:
    the unit README (Variant: fused reduction).
    """
    _check(a, b)
    m, k = a.shape
    n = b.shape[1]
    k_tiles = triton.cdiv(k, block_k)
    if split_k is None:
        split = split_k_for(m, n, k, num_sms(a.device), block_m=block_m, block_n=block_n, block_k=block_k)
    else:
        split = no_empty_split(k_tiles, split_k)
    k_per_split = triton.cdiv(k_tiles, split) * block_k
    partial = torch.empty((split, m, n), dtype=torch.float32, device=a.device)
    c = torch.empty((m, n), dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n), split)
    fused = bool(fused_reduce) and split > 1
    arrivals = arrival_counters(a.device, grid[0]) if fused else partial
    _splitk_partial_kernel[grid](
        a, b, partial, c, arrivals, m, n, k, k_per_split,
        a.stride(0), a.stride(1), b.stride(0), b.stride(1),
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, SWAP_AB=bool(swap_ab), SPLIT_K=split, FUSED=fused,
        num_stages=num_stages, num_warps=num_warps,
    )
    if not fused:
        _splitk_reduce_kernel[(triton.cdiv(m * n, REDUCE_BLOCK),)](
            partial, c, m * n, SPLIT_K=split, BLOCK=REDUCE_BLOCK, num_warps=4,
        )
    return c


_ARRIVALS: dict[tuple, torch.Tensor] = {}


def arrival_counters(device: torch.device, tiles: int) -> torch.Tensor:
    """int32 ``[>= tiles]`` zeros for ``fused_reduce``'s per-tile arrival counts, one buffer per
    device, made once and reused: every fused launch puts each count it raised back to 0, so the
    next launch (stream-ordered after it) finds zeros without a memset launch. Fused launches on
    two streams of one device at once would share the counts: keep them on one stream."""
    key = (device.type, device.index)
    found = _ARRIVALS.get(key)
    if found is None or found.numel() < tiles:
        found = torch.zeros(max(tiles, 256), dtype=torch.int32, device=device)
        _ARRIVALS[key] = found
    return found


def matmul_persistent(
    a: torch.Tensor, b: torch.Tensor, *, block_m: int = PERSISTENT_BLOCK_M, block_n: int = PERSISTENT_BLOCK_N,
    block_k: int = PERSISTENT_BLOCK_K, group_m: int = GROUP_M, num_stages: int = PERSISTENT_STAGES,
    num_warps: int = PERSISTENT_WARPS,
) -> torch.Tensor:
    """``a [M, K] bf16 @ b [K, N] bf16 -> [M, N] bf16``: one program per SM looping over tiles.

    Tiles are visited in grouped order (``group_m`` tile-rows per group); the defaults are this
    unit's persistent tile. Any strides are accepted, so an ``nn.Linear`` weight ``w [N, K]`` is
    passed as ``b = w.t()``.
    """
    _check(a, b)
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty((m, n), dtype=a.dtype, device=a.device)
    tiles = triton.cdiv(m, block_m) * triton.cdiv(n, block_n)
    programs = min(num_sms(a.device), tiles)
    _persistent_matmul_kernel[(programs,)](
        a, b, c, m, n, k, programs,
        a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=group_m,
        num_stages=num_stages, num_warps=num_warps,
    )
    return c
