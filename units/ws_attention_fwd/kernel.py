"""Warp-specialized attention forward in Gluon (Hopper), in FlashAttention-3's structure.

``o = softmax(q k^T / sqrt(D) [+ causal mask]) v`` for one ``[BLOCK_M = 128, D]`` query tile per
program, with the roles split across warps:

- a **producer** partition of one warp loads the query tile once, then streams K and V tiles by
  TMA through a ``KV_STAGES``-deep ring, each stage with its own ``k_ready`` and ``v_ready``
  mbarriers (S = Q K^T can start before V lands) and separate ``k_empty`` and ``v_empty``
  barriers (count 2), so a stage's K slot refills as soon as its ``Q K^T`` retired;
- two **softmax/MMA consumer** warpgroups own 64 query rows each (``loops.py``). Per key block
  a consumer runs ``S = Q K^T`` (wgmma, Q and K from shared memory), the online-softmax update in
  registers (running max ``m``, sum ``l``, rescale ``exp2(m_old - m_new)``), and ``O += P V`` with
  P fed to wgmma from registers (the S accumulator's layout is the A operand's, so P never touches
  shared memory). The solution's ``overlap`` schedule is FlashAttention-3's intra-warpgroup
  pipeline: block j's ``Q K^T`` and block j-1's ``P V`` are issued together and block j's
  softmax runs while that ``P V`` computes. Across the two warpgroups the warp scheduler
  interleaves one's softmax with the other's MMAs; ``pingpong`` imposes FlashAttention-3's
  alternation with an mbarrier turn (slower here: README, Measured).

The epilogue writes each consumer's normalized ``[64, D]`` rows through its slice of the query
buffer (no longer needed) with a TMA store. Registers: producer 40, consumers 232 (``setmaxnreg``).

Shapes and dtypes: q ``[B, H, S, D]``, k and v ``[B, HKV, S, D]`` bfloat16, contiguous, ``H`` a
multiple of ``HKV`` (grouped-query heads: query head ``h`` reads KV head ``h // (H // HKV)``),
``D`` 64 or 128, and ``S`` a multiple of 128: the tensors travel as ``[B * H * S, D]`` TMA views,
and a tile must not cross into the next head. The output has q's shape, bfloat16.

Example::

    q = torch.randn(4, 32, 4096, 128, device="cuda", dtype=torch.bfloat16)
    k, v = (torch.randn(4, 8, 4096, 128, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    o = attention(q, k, v, causal=True)   # == SDPA(q, k, v, is_causal=True, enable_gqa=True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    mbarrier,
    tma,
)
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

from units.gluon_compat import on_hopper, tma_load, tma_store
from units.online_softmax.attention import flash_attention
from units.ws_attention_fwd.loops import deferred_loop, kv_blocks, overlap_loop

LOG2E = 1.4426950408889634
BLOCK_M = 128  # query rows per program: 64 per consumer warpgroup (one m64 wgmma)
CONSUMER_ROWS = 64
# setmaxnreg split of 3 warpgroups at maxnreg=168, as in units/ws_persistent_gemm: the consumers
# hold S [64, 128] and O [64, 128] in float32 (64 + 64 registers) plus P in bf16 (32).
MAXNREG, PRODUCER_REGS, CONSUMER_REGS = 168, 40, 232
SUPPORTED_D = (64, 128)


@dataclass(frozen=True)
class AttnConfig:
    """One launch configuration.

    Attributes:
        block_n: keys per block.
        kv_stages: depth of the K/V ring (at least 2 with ``defer_pv``: a stage is freed one block
            late). Shared memory: Q 128 x D plus 2 x ``kv_stages`` tiles of ``block_n`` x D bf16
            (D = 128, 128 keys, 2 stages: 32 + 128 KiB; 3 stages: 224 KiB of the H200's 227).
        defer_pv: leave each block's ``P V`` wgmma in flight behind the next block's ``Q K^T``
            (FlashAttention-3's intra-warpgroup overlap, in its simplest form).
        overlap: FlashAttention-3's intra-warpgroup pipeline instead: block j's ``Q K^T`` and
            block j-1's ``P V`` are issued together, and block j's softmax runs while that
            ``P V`` computes (two P tiles live: 32 more registers per thread); ``defer_pv`` unused.
        pingpong: with ``overlap``, the two consumers take turns issuing their wgmmas (an mbarrier
            handshake per block), so one's softmax runs while the other's MMAs hold the tensor
            cores: FlashAttention-3's inter-warpgroup schedule, on mbarriers.
        fused_scale: with ``overlap``, the softmax scale folded into the exponent's FMA
            (``online_softmax``).
    """

    block_n: int = 128
    kv_stages: int = 2
    defer_pv: bool = True
    overlap: bool = False
    pingpong: bool = False
    fused_scale: bool = False

    @property
    def name(self) -> str:
        if self.overlap:
            tail = "_overlap" + ("_pingpong" if self.pingpong else "") + ("_fma" if self.fused_scale else "")
        else:
            tail = "_defer" if self.defer_pv else ""
        return f"{BLOCK_M}x{self.block_n}_kv{self.kv_stages}" + tail


# The solution: the fastest configuration of two H200 checks (TFLOP/s from CUDA-graph replays at B4
# H32 S4096 D128; units-gluon-attn-overlap-h200-2026-12-03.json, units-gluon-attn-fma-h200-2026-12-03.json):
# the overlap schedule with the scale in the exponent's FMA ran 532 (causal), 536 (GQA, HKV 8) and
# 608 (full) against cuDNN's 518, 517 and 588 in the same run; unfused 517, 524, 592; the ping-pong
# turn 504, 509, 583; the deferred P V (ptxas serializes its wgmma chain: C7512 / C7515) 457, 461, 497.
SOLUTION = AttnConfig(overlap=True, fused_scale=True)
CONFIGS: dict[str, AttnConfig] = {c.name: c for c in (
    SOLUTION, AttnConfig(overlap=True), AttnConfig(overlap=True, pingpong=True), AttnConfig(),
    AttnConfig(defer_pv=False))}


@gluon.jit
def _producer(q_desc, k_desc, v_desc, q_smem, k_bufs, v_bufs, q_ready, k_ready, v_ready, k_empty, v_empty,
              q_row, kv_row, pid_m, S, BLOCK_N: gl.constexpr, KV_STAGES: gl.constexpr, CAUSAL: gl.constexpr):
    """One warp: the query tile once, then every key block's K and V into the ring (a stage's K
    slot and V slot are freed separately: K once its ``Q K^T`` retired, V once its ``P V`` did)."""
    mbarrier.expect(q_ready, q_desc.block_type.nbytes)
    tma_load(q_desc, [q_row, 0], q_ready, q_smem)  # [128, D]
    _, total = kv_blocks(pid_m, S, BLOCK_N, CAUSAL)
    for j in range(total):
        s = j % KV_STAGES
        free_phase = ((j // KV_STAGES) & 1) ^ 1
        mbarrier.wait(k_empty.index(s), free_phase)
        mbarrier.expect(k_ready.index(s), k_desc.block_type.nbytes)
        tma_load(k_desc, [kv_row + j * BLOCK_N, 0], k_ready.index(s), k_bufs.index(s))
        mbarrier.wait(v_empty.index(s), free_phase)
        mbarrier.expect(v_ready.index(s), v_desc.block_type.nbytes)
        tma_load(v_desc, [kv_row + j * BLOCK_N, 0], v_ready.index(s), v_bufs.index(s))


@gluon.jit
def _consumer(o_desc, q_smem, k_bufs, v_bufs, q_ready, k_ready, v_ready, k_empty, v_empty, sched, q_row, pid_m, S,
              qk_scale, WG: gl.constexpr, HEAD_D: gl.constexpr, BLOCK_N: gl.constexpr, KV_STAGES: gl.constexpr,
              CAUSAL: gl.constexpr, DEFER_PV: gl.constexpr, OVERLAP: gl.constexpr, PINGPONG: gl.constexpr,
              FUSED_SCALE: gl.constexpr):
    """One warpgroup: 64 query rows through every key block, then their slice of the output."""
    ROWS: gl.constexpr = 64
    s_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                                       instr_shape=[16, BLOCK_N, 16])
    o_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                                       instr_shape=[16, HEAD_D, 16])
    p_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=o_layout, k_width=2)
    q = q_smem.slice(WG * ROWS, ROWS)  # [64, D]
    row0 = pid_m * 128 + WG * ROWS  # first query row of this warpgroup within its head
    acc = gl.zeros([ROWS, HEAD_D], gl.float32, o_layout)
    m_i = gl.full([ROWS], -float("inf"), gl.float32, gl.SliceLayout(1, s_layout))
    l_i = gl.zeros([ROWS], gl.float32, gl.SliceLayout(1, s_layout))
    mbarrier.wait(q_ready, 0)
    if OVERLAP:
        acc, l_i = overlap_loop(acc, m_i, l_i, q, k_bufs, v_bufs, k_ready, v_ready, k_empty, v_empty, sched, row0,
                                pid_m, S, qk_scale, s_layout, o_layout, p_layout, WG, ROWS, BLOCK_N, KV_STAGES,
                                CAUSAL, PINGPONG, FUSED_SCALE)
    else:
        acc, l_i = deferred_loop(acc, m_i, l_i, q, k_bufs, v_bufs, k_ready, v_ready, k_empty, v_empty, row0, pid_m,
                                 S, qk_scale, s_layout, o_layout, p_layout, ROWS, BLOCK_N, KV_STAGES, CAUSAL,
                                 DEFER_PV)
    out = acc / gl.convert_layout(l_i, gl.SliceLayout(1, o_layout))[:, None]
    q.store(out.to(o_desc.dtype))  # every wgmma that read Q has retired
    fence_async_shared()
    tma_store(o_desc, [q_row + WG * ROWS, 0], q)
    tma.store_wait(0)


@gluon.jit
def ws_attention_kernel(q_desc, k_desc, v_desc, o_desc, H, GROUP, S, qk_scale,
                        HEAD_D: gl.constexpr, BLOCK_N: gl.constexpr, KV_STAGES: gl.constexpr, CAUSAL: gl.constexpr,
                        DEFER_PV: gl.constexpr, OVERLAP: gl.constexpr, PINGPONG: gl.constexpr,
                        FUSED_SCALE: gl.constexpr, PRODUCER_REGS: gl.constexpr, CONSUMER_REGS: gl.constexpr):
    """One program per (query tile, batch x head); grid ``(S / 128, B * H)``."""
    pid_m = gl.program_id(0)
    if CAUSAL:
        pid_m = gl.num_programs(0) - 1 - pid_m  # longest rows first, so the last wave is short
    bh = gl.program_id(1)
    q_row = bh * S + pid_m * 128
    kv_row = ((bh // H) * (H // GROUP) + (bh % H) // GROUP) * S

    q_smem = gl.allocate_shared_memory(q_desc.dtype, q_desc.block_type.shape, q_desc.layout)
    k_bufs = gl.allocate_shared_memory(k_desc.dtype, [KV_STAGES] + k_desc.block_type.shape, k_desc.layout)
    v_bufs = gl.allocate_shared_memory(v_desc.dtype, [KV_STAGES] + v_desc.block_type.shape, v_desc.layout)
    q_ready = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    k_ready = gl.allocate_shared_memory(gl.int64, [KV_STAGES, 1], mbarrier.MBarrierLayout())
    v_ready = gl.allocate_shared_memory(gl.int64, [KV_STAGES, 1], mbarrier.MBarrierLayout())
    k_empty = gl.allocate_shared_memory(gl.int64, [KV_STAGES, 1], mbarrier.MBarrierLayout())
    v_empty = gl.allocate_shared_memory(gl.int64, [KV_STAGES, 1], mbarrier.MBarrierLayout())
    sched = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())  # ping-pong turns
    mbarrier.init(q_ready, count=1)
    for i in gl.static_range(KV_STAGES):
        mbarrier.init(k_ready.index(i), count=1)
        mbarrier.init(v_ready.index(i), count=1)
        mbarrier.init(k_empty.index(i), count=2)  # both consumers read every stage
        mbarrier.init(v_empty.index(i), count=2)
    for i in gl.static_range(2):
        mbarrier.init(sched.index(i), count=1)

    gl.warp_specialize([
        (_consumer, (o_desc, q_smem, k_bufs, v_bufs, q_ready, k_ready, v_ready, k_empty, v_empty, sched, q_row, pid_m,
                     S, qk_scale, 0, HEAD_D, BLOCK_N, KV_STAGES, CAUSAL, DEFER_PV, OVERLAP, PINGPONG, FUSED_SCALE)),
        (_consumer, (o_desc, q_smem, k_bufs, v_bufs, q_ready, k_ready, v_ready, k_empty, v_empty, sched, q_row, pid_m,
                     S, qk_scale, 1, HEAD_D, BLOCK_N, KV_STAGES, CAUSAL, DEFER_PV, OVERLAP, PINGPONG, FUSED_SCALE)),
        (_producer, (q_desc, k_desc, v_desc, q_smem, k_bufs, v_bufs, q_ready, k_ready, v_ready, k_empty, v_empty,
                     q_row, kv_row, pid_m, S, BLOCK_N, KV_STAGES, CAUSAL)),
    ], [4, 1], [CONSUMER_REGS, PRODUCER_REGS])


def shared_layout(block: list[int]) -> gl.NVMMASharedLayout:
    return gl.NVMMASharedLayout.get_default_for(block, gl.bfloat16)


def serves(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, config: AttnConfig) -> bool:
    """Whether ``attention`` runs these tensors with ``config``: a Hopper GPU and ``check_inputs``'s
    shapes, dtypes and layouts."""
    if not on_hopper(q):
        return False
    try:
        check_inputs(q, k, v, config)
    except (ValueError, TypeError, RuntimeError):
        return False
    return True


def check_inputs(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, config: AttnConfig) -> int:
    """Raise unless the kernel serves these tensors; return the GQA group size ``H // HKV``."""
    if q.dim() != 4 or k.shape != v.shape or k.dim() != 4 or k.shape[0] != q.shape[0] or k.shape[2:] != q.shape[2:]:
        raise ValueError(f"need q [B, H, S, D], k and v [B, HKV, S, D]; got {tuple(q.shape)}, {tuple(k.shape)}, "
                         f"{tuple(v.shape)}")
    b, h, s, d = q.shape
    if h % k.shape[1] or d not in SUPPORTED_D or s % BLOCK_M or s % config.block_n:
        raise ValueError(f"need H a multiple of HKV, D in {SUPPORTED_D} and S a multiple of {BLOCK_M}; got "
                         f"H={h}, HKV={k.shape[1]}, D={d}, S={s} (use units.online_softmax.attention otherwise)")
    if any(t.dtype != torch.bfloat16 or not t.is_contiguous() for t in (q, k, v)):
        raise TypeError("need contiguous bfloat16 q, k, v")
    if q.device.type != "cuda":
        raise RuntimeError("the Gluon kernel needs a Hopper GPU (no interpreter); on CPU use "
                           "units.ws_attention_fwd.naive")
    return h // k.shape[1]


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool,
              config: AttnConfig | None = None) -> torch.Tensor:
    """``softmax(q k^T / sqrt(D) [+ causal mask]) v -> [B, H, S, D] bf16`` (grouped-query heads).

    Args:
        q: ``[B, H, S, D]``; k, v: ``[B, HKV, S, D]``; bfloat16, contiguous, constraints as the
            module docstring (``check_inputs``).
        causal: mask key ``j > i`` for query ``i``.
        config: key tile and ring depth; ``SOLUTION`` by default, see ``CONFIGS``.
    """
    config = config or SOLUTION
    group = check_inputs(q, k, v, config)
    b, h, s, d = q.shape
    o = torch.empty_like(q)
    q_block, kv_block, o_block = [BLOCK_M, d], [config.block_n, d], [CONSUMER_ROWS, d]
    descs = [TensorDescriptor.from_tensor(t.view(-1, d), blk, shared_layout(blk))
             for t, blk in ((q, q_block), (k, kv_block), (v, kv_block), (o, o_block))]
    ws_attention_kernel[(s // BLOCK_M, b * h)](
        *descs, h, group, s, LOG2E / math.sqrt(d), d, config.block_n, config.kv_stages, causal, config.defer_pv,
        config.overlap, config.pingpong, config.fused_scale, PRODUCER_REGS, CONSUMER_REGS, num_warps=4, maxnreg=MAXNREG)
    return o


def attention_causal(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """``attention(q, k, v, causal=True)``: the unit's solution callable."""
    return attention(q, k, v, causal=True)


def attention_or_twin(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool,
                      config: AttnConfig | None = None) -> torch.Tensor:
    """``attention`` where it runs (``serves``), else ``units.online_softmax``'s Triton flash
    attention (the CPU interpreter, S not a multiple of 128, other D): the attention experts' call."""
    config = config or SOLUTION
    if serves(q, k, v, config):
        return attention(q, k, v, causal, config)
    return flash_attention(q, k, v, causal=causal)
