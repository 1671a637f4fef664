"""Warp-specialized bf16 GEMMs (producer/consumer warp groups): ``c = a @ b``.

Strategy: mark a loop ``tl.range(..., warp_specialize=True)`` so the compiler splits it into a
producer warp group that only issues TMA loads into a shared-memory ring and consumer warp groups
that wait on mbarriers, run async wgmma and write the output, with registers rebalanced
(setmaxnreg) toward the consumers. Two designs, each with and without the keyword (``GemmConfig``):

- persistent (``persistent=True``, the unit's solution): one program per SM striding over output
  tiles, the tile loop specialized. The producer runs ahead across tile boundaries, loading tile
  i+1's operands while the consumers convert and store tile i, where the same kernel without the
  keyword drains its pipeline at every tile. It pays on epilogue-heavy shapes: at M = N = 8192,
  K = 512 (69 GFLOP and a 128 MiB bf16 output) 1.12x the nested kernel without the keyword on the
  H200, five rounds out of five (``bench/results/sweep-ws/ws-sweep-h200-2026-11-30.jsonl``).
- per-tile (``persistent=False``): one program per output tile, the K loop specialized. On the H200
  it ran 0.95-1.05x its twin: Triton's pipelined TMA + async wgmma loop already overlaps loads and
  MMAs inside a tile.

``CANDIDATES`` names every configuration and ``COMPARISONS`` groups each specialized one with the
same kernel without the keyword; ``matmul(a, b, config)`` runs any of them by name or object.
``SOLUTION`` and ``NAIVE`` are the pair the unit is measured with (``naive.py`` runs ``NAIVE``).

Inputs ``a [M, K]`` and ``b [K, N]`` are bfloat16 with a contiguous last dimension and 16-byte
aligned base and row stride (K and N multiples of 8 for contiguous tensors). The output is a
contiguous bfloat16 ``[M, N]`` tensor accumulated in float32; tiles run in grouped order.
Descriptors are built on the device (``tl.make_tensor_descriptor``; workspace from
``triton.set_allocator``): Hopper's warp specialization splits the 128-row tile between two
consumer groups and must re-derive the TMA box, which a host-built descriptor does not allow
(triton issue 11587).

Example::

    a = torch.randn(8192, 512, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(512, 8192, device="cuda", dtype=torch.bfloat16)
    c = matmul(a, b)                                         # the unit's solution, [8192, 8192] bf16
    c = matmul(a, b, "persistent_128x256x64_s3_w4_ws_sub")   # a named candidate
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch
import triton
import triton.language as tl

from units.grouped_tile_order.kernel import grouped_tile

TMA_ALIGN_BYTES = 16
# Programs of a persistent launch under the CPU interpreter: fewer than the CPU shapes' tiles, so
# each program's tile loop takes several trips (one per SM on the GPU).
CPU_NUM_PROGRAMS = 3


@dataclass(frozen=True)
class GemmConfig:
    """One launch configuration of this unit's GEMM.

    Attributes:
        persistent: one program per SM looping over output tiles; else one program per tile.
        warp_specialize: specialize the tile loop (persistent) or the K loop (per-tile).
        block_m, block_n, block_k: tile sizes.
        num_stages: depth of the shared-memory ring of A and B tiles.
        num_warps: warps per program; under Hopper warp specialization the size of one warp group,
            so 4 gives a producer plus two 4-warp consumer groups of 64 rows each (12 warps).
        flatten: fuse the persistent tile and K loops into one software-pipelined loop, so the next
            tile's loads are issued during this tile's epilogue (``tl.range(..., flatten=True)``).
        epilogue_subtile: store each tile as two ``[block_m, block_n / 2]`` halves, halving the
            epilogue's shared-memory staging buffer (room for a fourth stage at 128x256x64).
        group_m: height, in tiles, of the bands of the grouped tile order.
    """

    persistent: bool
    warp_specialize: bool
    block_m: int = 128
    block_n: int = 256
    block_k: int = 64
    num_stages: int = 3
    num_warps: int = 4
    flatten: bool = False
    epilogue_subtile: bool = False
    group_m: int = 8

    @property
    def name(self) -> str:
        parts = ["persistent" if self.persistent else "tile",
                 f"{self.block_m}x{self.block_n}x{self.block_k}", f"s{self.num_stages}", f"w{self.num_warps}"]
        parts += [flag for flag, on in (("ws", self.warp_specialize), ("flat", self.flatten),
                                        ("sub", self.epilogue_subtile)) if on]
        return "_".join(parts + ([f"g{self.group_m}"] if self.group_m != 8 else []))


def _persistent_group(block_n: int, num_stages: int, subtile: bool, plain_warps: int) -> tuple[GemmConfig, ...]:
    """A warp-specialized persistent config, then the same kernel without the keyword, nested and
    flattened. Unspecialized, a 128x256 fp32 accumulator needs 8 warps (128 registers a thread)."""
    ws = GemmConfig(True, True, block_n=block_n, num_stages=num_stages, epilogue_subtile=subtile)
    plain = replace(ws, warp_specialize=False, num_warps=plain_warps)
    return ws, plain, replace(plain, flatten=True)


# Each group starts with a warp-specialized config; the others run the same tiles, stages and
# epilogue without it, so a group's time differences are the strategy's. Shared memory per CTA
# (H200 limit 227 KB): 128x256x64 is 48 KB a stage plus a 64 KB output box (32 KB subtiled), so 4
# stages fit only subtiled; 128x128x64 is 32 KB a stage plus 32 KB.
COMPARISONS: tuple[tuple[GemmConfig, ...], ...] = (
    _persistent_group(256, 3, False, 8),
    _persistent_group(256, 3, True, 8)
    # Also specialized with 8-warp groups, and flattened: Triton's persistent-matmul tutorial leaves Hopper
    # warp-specialized loops nested ("Hopper warpspec doesn't work with flatten").
    + (GemmConfig(True, True, num_stages=3, num_warps=8, epilogue_subtile=True),
       GemmConfig(True, True, num_stages=3, flatten=True, epilogue_subtile=True)),
    _persistent_group(256, 4, True, 8),
    _persistent_group(128, 4, False, 4),
    _persistent_group(128, 3, True, 4),
    # The per-tile design (K loop specialized).
    (GemmConfig(False, True), GemmConfig(False, False, num_warps=8)),
)
CANDIDATES: dict[str, GemmConfig] = {c.name: c for group in COMPARISONS for c in group}
# The unit's pair: the persistent 128x256x64 kernel in 3 stages with and without the keyword. H200,
# 2026-11-30 (bench/results/sweep-ws/ws-sweep-h200-2026-11-30.jsonl; launch-hidden timing, five interleaved
# rounds) at M = N = 8192, K = 512: 0.1232-0.1245 ms (554 TFLOP/s) against 0.1391-0.1395 ms (493),
# 1.12-1.13x in every round; 128x128x64 in 4 stages gave 1.13-1.15x. The per-tile pair
# (tile_128x256x64_s3_w4_ws against tile_128x256x64_s3_w8) gives 1.03x there and 0.95-1.05x at
# 4096^3.
SOLUTION = CANDIDATES["persistent_128x256x64_s3_w4_ws"]
NAIVE = CANDIDATES["persistent_128x256x64_s3_w8"]


@triton.jit
def _tile_offsets(tile, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """Row and column offsets of output tile ``tile`` in grouped order (bands of GROUP_M rows)."""
    pid_m, pid_n = grouped_tile(tile, M, N, BLOCK_M, BLOCK_N, GROUP_M)
    return pid_m * BLOCK_M, pid_n * BLOCK_N


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

    off_m, off_n = _tile_offsets(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BLOCK_K), num_stages=NUM_STAGES, warp_specialize=WARP_SPECIALIZE):
        a = a_desc.load([off_m, k * BLOCK_K])  # [BM, BK]
        b = b_desc.load([k * BLOCK_K, off_n])  # [BK, BN]
        acc = tl.dot(a, b, acc)
    c_desc.store([off_m, off_n], acc.to(c_ptr.dtype.element_ty))  # [BM, BN]


@triton.jit
def _persistent_ws_matmul_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_am, stride_bk, stride_cm,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    NUM_PROGRAMS: tl.constexpr, C_BLOCK_N: tl.constexpr,
    WARP_SPECIALIZE: tl.constexpr, FLATTEN: tl.constexpr,
):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[stride_am, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[stride_bk, 1], block_shape=[BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[stride_cm, 1], block_shape=[BLOCK_M, C_BLOCK_N])

    num_tiles = tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N)
    # The epilogue finds its tile from a counter of its own, not from the loop variable, so the
    # next tile's loads (prologue) and this tile's stores (epilogue) share no value once the
    # compiler overlaps them.
    store_tile = tl.program_id(0) - NUM_PROGRAMS
    for tile in tl.range(tl.program_id(0), num_tiles, NUM_PROGRAMS, flatten=FLATTEN, warp_specialize=WARP_SPECIALIZE):
        off_m, off_n = _tile_offsets(tile, M, N, BLOCK_M, BLOCK_N, GROUP_M)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(tl.cdiv(K, BLOCK_K)):
            a = a_desc.load([off_m, k * BLOCK_K])  # [BM, BK]
            b = b_desc.load([k * BLOCK_K, off_n])  # [BK, BN]
            acc = tl.dot(a, b, acc)

        store_tile += NUM_PROGRAMS
        off_cm, off_cn = _tile_offsets(store_tile, M, N, BLOCK_M, BLOCK_N, GROUP_M)
        if C_BLOCK_N == BLOCK_N:
            c_desc.store([off_cm, off_cn], acc.to(c_ptr.dtype.element_ty))  # [BM, BN]
        else:
            halves = tl.permute(tl.reshape(acc, (BLOCK_M, 2, C_BLOCK_N)), (0, 2, 1))  # [BM, BN/2, 2]
            left, right = tl.split(halves)  # [BM, BN/2] each
            c_desc.store([off_cm, off_cn], left.to(c_ptr.dtype.element_ty))
            c_desc.store([off_cm, off_cn + C_BLOCK_N], right.to(c_ptr.dtype.element_ty))


def use_workspace_on(device: torch.device) -> None:
    """Let device-side descriptors take their per-program workspace from torch on ``device``."""
    triton.set_allocator(lambda size, alignment, stream: torch.empty(size, dtype=torch.int8, device=device))


def num_programs(config: GemmConfig, m: int, n: int, device: torch.device) -> int:
    """Programs launched for an ``[m, n]`` output: one per tile, or for a persistent config one per
    SM (``CPU_NUM_PROGRAMS`` off the GPU) but never more than there are tiles."""
    tiles = triton.cdiv(m, config.block_m) * triton.cdiv(n, config.block_n)
    if not config.persistent:
        return tiles
    sms = torch.cuda.get_device_properties(device).multi_processor_count if device.type == "cuda" else CPU_NUM_PROGRAMS
    return min(sms, tiles)


def _check_operands(a: torch.Tensor, b: torch.Tensor) -> None:
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"expected a [M, K] and b [K, N], got {tuple(a.shape)} and {tuple(b.shape)}")
    if a.dtype != torch.bfloat16 or b.dtype != torch.bfloat16:
        raise TypeError(f"expected bfloat16 inputs, got {a.dtype} and {b.dtype}")


def _check_tma(name: str, t: torch.Tensor) -> None:
    size = t.element_size()
    if t.stride(1) != 1 or (t.stride(0) * size) % TMA_ALIGN_BYTES or (t.storage_offset() * size) % TMA_ALIGN_BYTES:
        raise ValueError(
            f"{name} {tuple(t.shape)} with strides {t.stride()} cannot back a TMA descriptor: the last "
            f"dimension must be contiguous and the base and row stride {TMA_ALIGN_BYTES}-byte aligned"
        )


def launch(a: torch.Tensor, b: torch.Tensor, config: GemmConfig) -> torch.Tensor:
    """Run the device-descriptor TMA GEMM in configuration ``config``."""
    _check_operands(a, b)
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty((m, n), dtype=a.dtype, device=a.device)
    for name, t in (("a", a), ("b", b), ("c", c)):
        _check_tma(name, t)
    use_workspace_on(a.device)
    programs = num_programs(config, m, n, a.device)
    common = dict(BLOCK_M=config.block_m, BLOCK_N=config.block_n, BLOCK_K=config.block_k, GROUP_M=config.group_m,
                  WARP_SPECIALIZE=config.warp_specialize, num_stages=config.num_stages, num_warps=config.num_warps)
    args = (a, b, c, m, n, k, a.stride(0), b.stride(0), c.stride(0))
    if config.persistent:
        c_block_n = config.block_n // 2 if config.epilogue_subtile else config.block_n
        _persistent_ws_matmul_kernel[(programs,)](
            *args, NUM_PROGRAMS=programs, C_BLOCK_N=c_block_n, FLATTEN=config.flatten, **common)
    else:
        _ws_matmul_kernel[(programs,)](*args, NUM_STAGES=config.num_stages, **common)
    return c


def resolve_config(config: GemmConfig | str | None) -> GemmConfig:
    """``config`` itself, the candidate it names, or ``SOLUTION`` for None."""
    if config is None:
        return SOLUTION
    if isinstance(config, GemmConfig):
        return config
    if config not in CANDIDATES:
        raise KeyError(f"no candidate {config!r}; choose one of {sorted(CANDIDATES)}")
    return CANDIDATES[config]


def matmul(a: torch.Tensor, b: torch.Tensor, config: GemmConfig | str | None = None) -> torch.Tensor:
    """``a [M, K] bf16 @ b [K, N] bf16 -> [M, N] bf16``, fp32 accumulation, warp-specialized.

    ``config`` is a ``GemmConfig``, a name from ``CANDIDATES``, or None for ``SOLUTION``.
    """
    return launch(a, b, resolve_config(config))
