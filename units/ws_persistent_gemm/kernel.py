"""Warp-specialized persistent GEMM in Gluon (Hopper): one TMA producer warp, two wgmma consumer warpgroups.

``c = a @ b`` with the roles the hardware rewards split across warps explicitly, the way cuBLAS's
sm90 kernels are built (384 threads, ``setmaxnreg``):

- a **producer** partition of one warp walks this program's output tiles and, for each K step,
  waits for a free stage of a ``NUM_STAGES``-deep shared-memory ring (``empty`` mbarrier), tells
  the stage's ``ready`` mbarrier how many bytes to expect and issues the TMA loads of A and B;
- two **consumer** warpgroups (the default partition and one worker) wait on ``ready``, run async
  ``warpgroup_mma`` on their rows of the tile and, once the wgmma that read a stage has retired,
  arrive on its ``empty`` barrier (count 2: one arrival per consumer), then write their half of the
  tile through shared memory with a TMA store.

Two schedules share the partitions (``SCHEDULE``):

- ``cooperative``: both consumers work on the same ``[BLOCK_M, BLOCK_N]`` tile, 64 rows each, so
  one TMA load of A and B feeds both; the producer runs ahead across tiles, so the next tile's
  stages fill during this tile's epilogue.
- ``pingpong``: consumers take alternate tiles, each a whole ``[BLOCK_M, BLOCK_N]`` tile of its
  own (two m64 wgmmas per K step); the in-order ring makes their main loops alternate, so one
  consumer's epilogue overlaps the other's MMAs (CUTLASS's ping-pong, with the ring order doing the
  job of its ordered barriers).

The producer gets 40 registers and the consumers 232 (``setmaxnreg``; ``maxnreg=168`` for the
launch's 12 warps: 168 * 3 = 232 + 232 + 40), room for a 64x256 or 128x128 fp32 accumulator (128
registers a thread).

Inputs ``a [M, K]`` and ``b [K, N]`` are bfloat16 with a contiguous last dimension (or a K-major
``b``, read in place) and 16-byte aligned base and row stride (``K % 8 == N % 8 == 0`` for
contiguous tensors); any M, N, K otherwise: TMA zero-fills out-of-bounds loads and clips
stores. The output is a contiguous bfloat16 ``[M, N]`` tensor accumulated in float32.
``units.ws_fp8_gemm`` runs the same kernel with fp8 operands (``B_K_MAJOR``) and per-tensor or
per-row scales applied in the epilogue (``SCALED``: ``NO_SCALES``, ``TENSOR_SCALES``, ``ROW_SCALES``).

Example::

    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    c = matmul(a, b)                          # the unit's solution, cooperative 128x256x64, 4 stages
    c = matmul(a, b, CONFIGS["pingpong_128x128x64_s6"])
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    mbarrier,
    tma,
    warpgroup_mma,
    warpgroup_mma_wait,
)
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

from units.gluon_compat import on_hopper, tma_load, tma_store
from units.persistent_splitk.kernel import matmul_persistent

COOPERATIVE, PINGPONG = 0, 1
# Epilogue scales (``SCALED``): none; one float32 each for A and B; ``scale_a [M]`` and ``scale_b [N]``.
NO_SCALES, TENSOR_SCALES, ROW_SCALES = 0, 1, 2
CONSUMERS = 2  # consumer warpgroups: the default partition and one worker partition
PRODUCER_WARPS = 1
# setmaxnreg budget for 3 warpgroups at maxnreg=168 (65536 registers / 384 threads = 170, rounded
# down to a multiple of 8): the producer needs few, the consumers hold the accumulator.
MAXNREG, PRODUCER_REGS, CONSUMER_REGS = 168, 40, 232
TMA_ALIGN_BYTES = 16


@dataclass(frozen=True)
class WsGemmConfig:
    """One launch configuration.

    Attributes:
        schedule: ``COOPERATIVE`` (both consumers on one tile, ``block_m / 2`` rows each) or
            ``PINGPONG`` (each consumer on a whole tile of its own).
        block_m: rows of a tile, a multiple of 64 per consumer (one wgmma is 64 rows).
        block_n, block_k: tile columns and K step.
        num_stages: depth of the A/B shared-memory ring.
        group_m: height, in tiles, of the grouped tile order's bands.
        promote_every: 0 accumulates the whole K loop in the wgmma accumulator; P > 0 (fp8) runs
            the wgmma chain into a second accumulator added into float32 every P K steps (twice
            the accumulator registers: ``consumer_m * block_n`` at most 64 x 128).
    """

    schedule: int = COOPERATIVE
    block_m: int = 128
    block_n: int = 256
    block_k: int = 64
    num_stages: int = 4
    group_m: int = 8
    promote_every: int = 0

    @property
    def name(self) -> str:
        kind = "cooperative" if self.schedule == COOPERATIVE else "pingpong"
        promote = f"_p{self.promote_every}" if self.promote_every else ""
        return f"{kind}_{self.block_m}x{self.block_n}x{self.block_k}_s{self.num_stages}{promote}"

    @property
    def consumer_m(self) -> int:
        """Rows of the accumulator one consumer warpgroup holds."""
        return self.block_m // CONSUMERS if self.schedule == COOPERATIVE else self.block_m


# Shared memory at 128x256x64 bf16: 48 KiB a stage, so 4 stages (192 KiB) plus two [64, 256] bf16
# epilogue buffers (2 x 32 KiB) exceed the H200's 227 KiB; the epilogue stores 64-column slices
# through a [rows, 64] buffer per consumer (8 or 16 KiB) instead. Ping-pong at 128x128x64 is 32 KiB
# a stage. Shared memory of each: `python -m units.lib.gluon_compile`. The ping-pong configuration has no
# timing in the results; the solution's: BENCHMARKS.md, Gluon units.
SOLUTION = WsGemmConfig()
CONFIGS: dict[str, WsGemmConfig] = {c.name: c for c in (
    SOLUTION,
    WsGemmConfig(num_stages=3),
    WsGemmConfig(block_n=128, num_stages=5),
    WsGemmConfig(PINGPONG, block_m=128, block_n=128, num_stages=6),
    WsGemmConfig(PINGPONG, block_m=128, block_n=128, num_stages=5),
)}
EPILOGUE_N = 64  # columns per TMA store of the epilogue


@gluon.jit
def _tile_coords(tile, M, N, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, GROUP_M: gl.constexpr):
    """Row and column offsets of output tile ``tile`` in grouped order (units/grouped_tile_order)."""
    num_pid_m = gl.cdiv(M, BLOCK_M)
    num_pid_n = gl.cdiv(N, BLOCK_N)
    in_group = GROUP_M * num_pid_n
    first_m = (tile // in_group) * GROUP_M
    group_rows = gl.minimum(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (tile % in_group) % group_rows
    pid_n = (tile % in_group) // group_rows
    return pid_m * BLOCK_M, pid_n * BLOCK_N


@gluon.jit
def _producer(a_desc, b_desc, a_bufs, b_bufs, ready, empty, M, N, K,
              BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, BLOCK_K: gl.constexpr, GROUP_M: gl.constexpr,
              NUM_STAGES: gl.constexpr, B_K_MAJOR: gl.constexpr):
    """One warp: for every K step of every tile of this program, refill the next ring stage."""
    num_tiles = gl.cdiv(M, BLOCK_M) * gl.cdiv(N, BLOCK_N)
    stage_bytes: gl.constexpr = a_desc.block_type.nbytes + b_desc.block_type.nbytes
    step = 0
    for tile in range(gl.program_id(0), num_tiles, gl.num_programs(0)):
        off_m, off_n = _tile_coords(tile, M, N, BLOCK_M, BLOCK_N, GROUP_M)
        for k in range(0, K, BLOCK_K):
            s = step % NUM_STAGES
            # A fresh barrier counts as having completed the phase before 0: the first round of
            # waits (parity 1) passes at once.
            mbarrier.wait(empty.index(s), ((step // NUM_STAGES) & 1) ^ 1)
            mbarrier.expect(ready.index(s), stage_bytes)
            tma_load(a_desc, [off_m, k], ready.index(s), a_bufs.index(s))  # [BM, BK]
            if B_K_MAJOR:
                tma_load(b_desc, [off_n, k], ready.index(s), b_bufs.index(s))  # [BN, BK]
            else:
                tma_load(b_desc, [k, off_n], ready.index(s), b_bufs.index(s))  # [BK, BN]
            step += 1


@gluon.jit
def _split_columns(x, PARTS: gl.constexpr):
    """``x [R, C]`` as a tuple of ``PARTS`` (a power of two) ``[R, C / PARTS]`` column blocks, left
    to right. In the wgmma layout a column's high bits are register bits, so this moves no data."""
    xs = (x,)
    for _ in gl.static_range(PARTS.bit_length() - 1):
        halves = ()
        for j in gl.static_range(len(xs)):
            y = xs[j]
            halves += y.reshape([y.shape[0], 2, y.shape[1] // 2]).permute((0, 2, 1)).split()
        xs = halves
    return xs


@gluon.jit
def _consumer(a_bufs, b_bufs, ready, empty, c_desc, c_smem, scale_a_ptr, scale_b_ptr, M, N, K,
              WG: gl.constexpr, SCHEDULE: gl.constexpr, ROWS: gl.constexpr,
              BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, BLOCK_K: gl.constexpr, GROUP_M: gl.constexpr,
              NUM_STAGES: gl.constexpr, B_K_MAJOR: gl.constexpr, SCALED: gl.constexpr, EPI_N: gl.constexpr,
              PROMOTE_EVERY: gl.constexpr):
    """One warpgroup: wgmma over the ring for its ``ROWS`` rows of each of its tiles, then the epilogue."""
    mma_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, BLOCK_N, 256 // a_bufs.dtype.primitive_bitwidth])
    num_tiles = gl.cdiv(M, BLOCK_M) * gl.cdiv(N, BLOCK_N)
    k_steps = gl.cdiv(K, BLOCK_K)
    if SCALED == 1:
        scale = gl.load(scale_a_ptr) * gl.load(scale_b_ptr)
    if SCHEDULE == 0:
        first_tile = gl.program_id(0)
        tile_stride = gl.num_programs(0)
        step = 0
    else:
        # Ping-pong: this program's tiles alternate between the consumers; the other one's K steps
        # sit between ours in the ring.
        first_tile = gl.program_id(0) + WG * gl.num_programs(0)
        tile_stride = 2 * gl.num_programs(0)
        step = WG * k_steps
    row_in_tile: gl.constexpr = WG * ROWS if SCHEDULE == 0 else 0
    for tile in range(first_tile, num_tiles, tile_stride):
        off_m, off_n = _tile_coords(tile, M, N, BLOCK_M, BLOCK_N, GROUP_M)
        acc = gl.zeros([ROWS, BLOCK_N], gl.float32, mma_layout)
        if PROMOTE_EVERY > 0:
            part = gl.zeros([ROWS, BLOCK_N], gl.float32, mma_layout)
        prev = step % NUM_STAGES
        for ki in range(k_steps):
            s = step % NUM_STAGES
            mbarrier.wait(ready.index(s), (step // NUM_STAGES) & 1)
            a = a_bufs.index(s)
            if SCHEDULE == 0:
                a = a.slice(row_in_tile, ROWS)  # [ROWS, BK], this warpgroup's rows of the A tile
            b = b_bufs.index(s)
            if B_K_MAJOR:
                b = b.permute((1, 0))  # [BK, BN] view of the K-major [BN, BK] tile
            if PROMOTE_EVERY > 0:
                # Two-level accumulation: the wgmma chain restarts every PROMOTE_EVERY K steps and
                # its partial sum is added into the float32 accumulator on the CUDA cores.
                part = warpgroup_mma(a, b, part, use_acc=ki % PROMOTE_EVERY != 0, is_async=True)
                part = warpgroup_mma_wait(num_outstanding=1, deps=(part,))
                if ki % PROMOTE_EVERY == PROMOTE_EVERY - 1:
                    part = warpgroup_mma_wait(num_outstanding=0, deps=(part,))
                    acc += part
            else:
                acc = warpgroup_mma(a, b, acc, is_async=True)
                # Keep one wgmma in flight: the one issued last step has retired, so its stage is free.
                acc = warpgroup_mma_wait(num_outstanding=1, deps=(acc,))
            mbarrier.arrive(empty.index(prev), pred=ki > 0)
            prev = s
            step += 1
        if PROMOTE_EVERY > 0:
            part = warpgroup_mma_wait(num_outstanding=0, deps=(part,))
            if k_steps % PROMOTE_EVERY != 0:
                acc += part
        else:
            acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc,))
        mbarrier.arrive(empty.index(prev), pred=k_steps > 0)
        if SCHEDULE == 1:
            step += k_steps  # skip the other consumer's tile in the ring

        if SCALED == 1:
            acc = acc * scale
        elif SCALED == 2:
            # Per-row scales: scale_a of this warpgroup's rows, scale_b of the tile's columns, loaded
            # straight into the accumulator's row and column slices (out-of-range ones read as 0;
            # TMA clips their stores).
            rows = off_m + row_in_tile + gl.arange(0, ROWS, layout=gl.SliceLayout(1, mma_layout))
            cols = off_n + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, mma_layout))
            sa = gl.load(scale_a_ptr + rows, mask=rows < M, other=0.0)
            sb = gl.load(scale_b_ptr + cols, mask=cols < N, other=0.0)
            acc = acc * gl.expand_dims(sa, 1) * gl.expand_dims(sb, 0)
        parts = _split_columns(acc.to(c_desc.dtype), BLOCK_N // EPI_N)  # [ROWS, EPI_N] each
        for j in gl.static_range(len(parts)):
            tma.store_wait(0)  # the previous store out of c_smem has read it
            c_smem.store(parts[j])
            fence_async_shared()
            tma_store(c_desc, [off_m + row_in_tile, off_n + j * EPI_N], c_smem)
    tma.store_wait(0)


@gluon.jit
def ws_gemm_kernel(a_desc, b_desc, c_desc, scale_a_ptr, scale_b_ptr, M, N, K,
                   SCHEDULE: gl.constexpr, ROWS: gl.constexpr, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr,
                   BLOCK_K: gl.constexpr, GROUP_M: gl.constexpr, NUM_STAGES: gl.constexpr,
                   B_K_MAJOR: gl.constexpr, SCALED: gl.constexpr, EPI_N: gl.constexpr, PROMOTE_EVERY: gl.constexpr,
                   PRODUCER_REGS: gl.constexpr, CONSUMER_REGS: gl.constexpr):
    """Persistent program: allocate the ring and barriers, then fork producer and consumers."""
    a_bufs = gl.allocate_shared_memory(a_desc.dtype, [NUM_STAGES] + a_desc.block_type.shape, a_desc.layout)
    b_bufs = gl.allocate_shared_memory(b_desc.dtype, [NUM_STAGES] + b_desc.block_type.shape, b_desc.layout)
    ready = gl.allocate_shared_memory(gl.int64, [NUM_STAGES, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [NUM_STAGES, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(NUM_STAGES):
        mbarrier.init(ready.index(i), count=1)
        # Cooperative: both consumers read every stage. Ping-pong: one consumer reads each stage.
        mbarrier.init(empty.index(i), count=2 if SCHEDULE == 0 else 1)
    c_smem0 = gl.allocate_shared_memory(c_desc.dtype, c_desc.block_type.shape, c_desc.layout)
    c_smem1 = gl.allocate_shared_memory(c_desc.dtype, c_desc.block_type.shape, c_desc.layout)

    gl.warp_specialize([
        (_consumer, (a_bufs, b_bufs, ready, empty, c_desc, c_smem0, scale_a_ptr, scale_b_ptr, M, N, K, 0,
                     SCHEDULE, ROWS, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, NUM_STAGES, B_K_MAJOR, SCALED, EPI_N,
                     PROMOTE_EVERY)),
        (_consumer, (a_bufs, b_bufs, ready, empty, c_desc, c_smem1, scale_a_ptr, scale_b_ptr, M, N, K, 1,
                     SCHEDULE, ROWS, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, NUM_STAGES, B_K_MAJOR, SCALED, EPI_N,
                     PROMOTE_EVERY)),
        (_producer, (a_desc, b_desc, a_bufs, b_bufs, ready, empty, M, N, K,
                     BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, NUM_STAGES, B_K_MAJOR)),
    ], [4, 1], [CONSUMER_REGS, PRODUCER_REGS])


def shared_layout(block_shape: list[int], dtype) -> gl.NVMMASharedLayout:
    return gl.NVMMASharedLayout.get_default_for(block_shape, dtype)


def _torch_to_gl(dtype: torch.dtype):
    return {torch.bfloat16: gl.bfloat16, torch.float8_e4m3fn: gl.float8e4nv, torch.float16: gl.float16}[dtype]


def descriptor_shapes(config: WsGemmConfig, b_k_major: bool) -> tuple[list[int], list[int], list[int]]:
    """TMA boxes of A, B (``[BN, BK]`` when K-major) and of one epilogue store."""
    b_block = [config.block_n, config.block_k] if b_k_major else [config.block_k, config.block_n]
    return [config.block_m, config.block_k], b_block, [config.consumer_m, min(EPILOGUE_N, config.block_n)]


def fits_tma(a: torch.Tensor, b: torch.Tensor, copies_b: bool = False) -> bool:
    """True when ``a [M, K]``, ``b [K, N]`` (a K-major ``b`` read through its ``[N, K]`` transpose)
    and the bf16 ``[M, N]`` output can back TMA descriptors (``check_tma``: contiguous rows, 16-byte
    aligned base and row stride), so a caller can run this kernel or a pointer-based one without
    catching an exception. ``copies_b``: a ``b`` that is not K-major is copied to a contiguous
    ``[N, K]`` first (``units.ws_fp8_gemm``), so only its K-major rows need to fit."""
    if a.ndim != 2 or b.ndim != 2 or (b.shape[1] * 2) % TMA_ALIGN_BYTES:
        return False
    bt = b.t()
    if bt.is_contiguous() and b.shape[1] > 1:
        operands = [a, bt]  # a K-major b, read in place
    elif copies_b:
        operands = [a]  # b's contiguous K-major copy has a's row length
    else:
        operands = [a, b]
    try:
        for t in operands:
            check_tma("operand", t)
    except ValueError:
        return False
    return True


def check_tma(name: str, t: torch.Tensor) -> None:
    """Raise unless ``t`` can back a TMA descriptor (contiguous last dim, 16-byte aligned rows)."""
    size = t.element_size()
    offset = t.storage_offset() * size  # the caching allocator's blocks start 512-byte aligned
    if t.stride(-1) != 1 or (t.stride(0) * size) % TMA_ALIGN_BYTES or offset % TMA_ALIGN_BYTES:
        raise ValueError(f"{name} {tuple(t.shape)} with strides {t.stride()} cannot back a TMA descriptor: the last "
                         f"dimension must be contiguous and the base and row stride {TMA_ALIGN_BYTES}-byte aligned")


def launch(a: torch.Tensor, b_view: torch.Tensor, out_dtype: torch.dtype, config: WsGemmConfig,
           b_k_major: bool, scales: tuple[torch.Tensor, torch.Tensor] | None = None,
           scale_mode: int = TENSOR_SCALES) -> torch.Tensor:
    """Run ``ws_gemm_kernel``: ``b_view`` is ``[K, N]``, or ``[N, K]`` when ``b_k_major``; ``scales``
    are contiguous float32 tensors read as ``scale_mode`` says (``TENSOR_SCALES``: one element
    each; ``ROW_SCALES``: ``[M]`` and ``[N]``)."""
    m, k = a.shape
    n = b_view.shape[0] if b_k_major else b_view.shape[1]
    c = torch.empty((m, n), dtype=out_dtype, device=a.device)
    for name, t in (("a", a), ("b", b_view), ("c", c)):
        check_tma(name, t)
    a_block, b_block, c_block = descriptor_shapes(config, b_k_major)
    in_gl, out_gl = _torch_to_gl(a.dtype), _torch_to_gl(out_dtype)
    a_desc = TensorDescriptor.from_tensor(a, a_block, shared_layout(a_block, in_gl))
    b_desc = TensorDescriptor.from_tensor(b_view, b_block, shared_layout(b_block, in_gl))
    c_desc = TensorDescriptor.from_tensor(c, c_block, shared_layout(c_block, out_gl))
    sa, sb = scales if scales is not None else (c, c)
    tiles = triton.cdiv(m, config.block_m) * triton.cdiv(n, config.block_n)
    sms = torch.cuda.get_device_properties(a.device).multi_processor_count
    per_program = CONSUMERS if config.schedule == PINGPONG else 1
    programs = max(1, min(sms, triton.cdiv(tiles, per_program)))
    ws_gemm_kernel[(programs,)](
        a_desc, b_desc, c_desc, sa, sb, m, n, k,
        config.schedule, config.consumer_m, config.block_m, config.block_n, config.block_k, config.group_m,
        config.num_stages, b_k_major, scale_mode if scales is not None else NO_SCALES, c_block[1],
        config.promote_every, PRODUCER_REGS,
        CONSUMER_REGS, num_warps=4, maxnreg=MAXNREG)
    return c


def check_operands(a: torch.Tensor, b: torch.Tensor, dtype: torch.dtype = torch.bfloat16,
                   cpu_twin: str = "units.ws_persistent_gemm.naive") -> None:
    """Raise unless ``a [M, K]`` and ``b [K, N]`` are ``dtype`` tensors on a GPU (``cpu_twin``
    names the module to use on the CPU)."""
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"expected a [M, K] and b [K, N], got {tuple(a.shape)} and {tuple(b.shape)}")
    if a.dtype != dtype or b.dtype != dtype:
        raise TypeError(f"expected {dtype} inputs, got {a.dtype} and {b.dtype}")
    if a.device.type != "cuda":
        raise RuntimeError(f"the Gluon kernel needs a Hopper GPU (no interpreter); on CPU use {cpu_twin}")


def matmul(a: torch.Tensor, b: torch.Tensor, config: WsGemmConfig | None = None) -> torch.Tensor:
    """``a [M, K] bf16 @ b [K, N] bf16 -> [M, N] bf16``, fp32 accumulation, warp-specialized.

    ``config`` defaults to ``SOLUTION`` (cooperative 128x256x64, 4 stages); see ``CONFIGS``. A
    K-major ``b`` (``w.t()`` of a contiguous ``[N, K]`` weight, as ``nn.Linear`` stores it) is read
    in place; any other ``b`` needs a contiguous last dimension.
    """
    check_operands(a, b)
    if b.stride(0) == 1 and b.t().is_contiguous() and b.shape[1] > 1:
        # K-major b (``w.t()`` of a contiguous [N, K] weight): [BN, BK] boxes of w, a permuted view
        # for wgmma, no copy.
        return launch(a, b.t(), torch.bfloat16, config or SOLUTION, b_k_major=True)
    return launch(a, b, torch.bfloat16, config or SOLUTION, b_k_major=False)


def matmul_or_twin(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``matmul`` on a Hopper GPU when TMA can describe the operands (``fits_tma``), else
    ``units.persistent_splitk``'s persistent Triton-language GEMM (any strides; the CPU
    interpreter): the linear experts' call, one import that ``policies.inline`` can inline."""
    if on_hopper(a) and fits_tma(a, b):
        return matmul(a, b)
    return matmul_persistent(a, b)
