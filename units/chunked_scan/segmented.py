"""Simple GLA forward as segmented walks: few heads over long sequences, no per-chunk state in DRAM.

``chunk_simple_gla_segmented`` computes what ``chunk_simple_gla`` (``kernel.py``) computes, with the
sequence cut into ``segments`` runs of SEG chunks walked in parallel, in three kernels:

1. ``chunk_states_kernel`` without its per-chunk stores, grid ``(cdiv(D, BK), cdiv(D, BV),
   B*H*segments)``: each program walks one run of one head from a zero float32 ``[BK, BV]`` state
   and stores only the run's final local state and total log-decay (float32).
2. ``segment_carry_kernel``, grid ``(cdiv(D, BK), cdiv(D, BV), B*H)``: the state entering each run,
   ``C_{s+1} = exp(decay_s) C_s + end_s`` (float32).
3. ``_segment_walk_kernel``, grid ``(cdiv(D, BV), B*H*segments)``: each program walks its run as
   ``chunk_simple_gla`` walks the whole sequence (per chunk the output from the state entering it,
   then the state update, four bf16 MMAs with float32 accumulation), starting from ``C_s``.

The two-pass form (``chunk_simple_gla_parallel``) writes every chunk's entering state and reads it
back (bf16 ``[NT, D, D]`` per head: 256 MiB each way at B1 H16 T32768 D128, two thirds of q, k and v
together); here only two float32 ``[D, D]`` blocks per run cross DRAM, at the cost of reading k and v
twice (pass 1 and the walks) and of a sequential walk of SEG chunks per program. With one segment
it is the walk itself. On the H200 at B1 H16 T32768 D128 (the long simple-GLA task): 0.380 ms in 8
segments, 1.32x FLA and 1.25x the two-pass scan (``WALK_PROGRAMS_PER_SM``): q, k, v and o (512
MiB) over the time are 1.4 TB/s; with k and v read twice the DRAM traffic is 768 MiB, 2.1 TB/s.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from units.chunked_scan.kernel import (
    BT,
    CARRY_NUM_WARPS,
    chunk_states_kernel,
    prepared_inputs,
    segment_carry_kernel,
    walk_step,
)
from units.persistent_splitk.kernel import num_sms

# Pass 1's state tile and launch (the two-pass state kernel's: 64x64, 4 warps, 3 stages), the walks'
# V-block and launch (chunk_simple_gla's: 64, 4 warps, 2 stages), and the walk programs per SM that
# set the default segment count (segments_for_walk). H200 chunked-scan sweep of 2026-12-03 at
# B1 H16 T32768 D128 (32 walk programs per segment; three interleaved rounds, FLA in the same run,
# bench/results/sweep-chunked-scan-long/chunked-scan-segmented-sweep-h200-2026-12-03.jsonl): 8 segments 0.380 ms (1.32x
# FLA's 0.500, 1.25x the two-pass scan's best 0.474), 16: 0.396, 32: 0.426, 64: 0.489; at 16
# segments 3 stages 0.478, 8 warps 0.658, a 32-wide V-block 0.543. Two per SM gives the 8.
STATE_BK, STATE_BV, STATE_WARPS, STATE_STAGES = 64, 64, 4, 3
WALK_BV, WALK_WARPS, WALK_STAGES = 64, 4, 2
WALK_PROGRAMS_PER_SM = 2


@triton.jit
def _segment_walk_kernel(q, k, v, g, carries, o, T, D, NT, NSEG, SEG,
                         BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr):
    # One program per (V-block, head x segment): chunks [s*SEG, (s+1)*SEG) from carries[bh, s].
    i_v, i_bs = tl.program_id(0), tl.program_id(1)
    c0 = (i_bs % NSEG) * SEG
    c1 = tl.minimum(c0 + SEG, NT)
    i_bh = i_bs // NSEG
    base = i_bh.to(tl.int64) * T * D
    offs_t = tl.arange(0, BT)  # [BT] token offsets in a chunk
    offs_k = tl.arange(0, BK)  # [BK] all of K: q @ S contracts over it
    offs_v = i_v * BV + tl.arange(0, BV)  # [BV]
    mask_k, mask_v = offs_k < D, offs_v < D
    causal = offs_t[:, None] >= offs_t[None, :]  # [BT, BT]
    tile = offs_k[:, None] * D + offs_v[None, :]  # [BK, BV] offsets in a [D, D] state
    b_S = tl.load(carries + i_bs.to(tl.int64) * D * D + tile, mask=mask_k[:, None] & mask_v[None, :],
                  other=0.0)  # [BK, BV] float32, the state entering the segment
    for i_t in range(c0, c1):
        b_S = walk_step(q, k, v, g, o, base, i_bh, i_t * BT + offs_t, offs_k, offs_v, mask_k, mask_v, causal, T, D,
                        b_S)


def segments_for_walk(programs: int, chunks: int, sms: int) -> int:
    """Segments so that the walks launch about ``WALK_PROGRAMS_PER_SM * sms`` programs in all from
    ``programs`` per segment (``cdiv(D, BV) * B * H``); at least 1, at most ``chunks``."""
    return max(1, min(chunks, round(WALK_PROGRAMS_PER_SM * sms / max(programs, 1))))


def segment_carries(k: torch.Tensor, v: torch.Tensor, g: torch.Tensor, seg: int, nseg: int, bk: int, bv: int,
                    num_warps: int, num_stages: int) -> torch.Tensor:
    """Passes 1 and 2: the float32 state entering each run of ``seg`` chunks, ``[B*H, nseg, D, D]``,
    for prepared ``k, v`` ``[B, H, T, D]`` and ``g`` ``[B, H, T]``."""
    b, h, t_len, d = k.shape
    nt = triton.cdiv(t_len, BT)
    ends = torch.empty(b * h, nseg, d, d, dtype=torch.float32, device=k.device)
    seg_decay = torch.empty(b * h, nseg, dtype=torch.float32, device=k.device)
    carries = torch.empty_like(ends)
    grid_k, grid_v = triton.cdiv(d, bk), triton.cdiv(d, bv)
    # h and gcum are not written without STORE_STATES: ends and seg_decay fill their slots.
    chunk_states_kernel[(grid_k, grid_v, b * h * nseg)](
        k, v, g, ends, seg_decay, ends, seg_decay, t_len, d, nt, nseg, seg, BT=BT, BK=bk, BV=bv, MULTI_SEG=True,
        STORE_STATES=False, num_warps=num_warps, num_stages=num_stages)
    segment_carry_kernel[(grid_k, grid_v, b * h)](ends, seg_decay, carries, d, nseg, BK=bk, BV=bv,
                                                  num_warps=CARRY_NUM_WARPS)
    return carries


def chunk_simple_gla_segmented(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor, *,
                               segments: int | None = None, block_k: int = STATE_BK, block_v: int = STATE_BV,
                               state_warps: int = STATE_WARPS, state_stages: int = STATE_STAGES,
                               walk_block_v: int = WALK_BV, walk_warps: int = WALK_WARPS,
                               walk_stages: int = WALK_STAGES) -> torch.Tensor:
    """Simple GLA forward in segmented walks (module docstring); same arguments and result as
    ``chunk_simple_gla``, and the same per-chunk arithmetic (bf16 state for ``q @ S``, bf16
    ``v * decay`` for ``k^T @ v``, float32 accumulation); the state entering a run is the float32
    sum of the runs before it, so several segments agree with one to float32 summation order.

    Args:
        q, k, v: bfloat16 ``[B, H, T, D]`` (any T; D <= 256).
        g: float32 ``[B, H, T]`` log-decay per token, ``<= 0``.
        segments: runs the sequence is cut into (>= 1; at most one per chunk, empty ones dropped);
            None for ``segments_for_walk`` on q's device.
        block_k, block_v, state_warps, state_stages: pass 1's state tile (powers of two >= 16) and
            launch options.
        walk_block_v, walk_warps, walk_stages: the walks' V-block (a power of two >= 16) and launch.

    Returns:
        bfloat16 ``[B, H, T, D]``: ``o_t = sum_{s <= t} exp(G_t - G_s) (q_t . k_s) v_s``.

    Example::

        q, k, v = (torch.randn(1, 16, 32768, 128, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        g = torch.nn.functional.logsigmoid(torch.randn(1, 16, 32768, device="cuda") + 4)
        o = chunk_simple_gla_segmented(q * 128 ** -0.5, k, v, g)  # [1, 16, 32768, 128], 8 segments on an H200
    """
    q, k, v, g = prepared_inputs(q, k, v, g)
    for name, block in (("block_k", block_k), ("block_v", block_v), ("walk_block_v", walk_block_v)):
        if block < 16 or block & (block - 1):
            raise ValueError(f"{name} must be a power of two >= 16, got {block}")
    b, h, t_len, d = q.shape
    bk_full = max(16, triton.next_power_of_2(d))
    bk, bv, wbv = min(block_k, bk_full), min(block_v, bk_full), min(walk_block_v, bk_full)
    nt = triton.cdiv(t_len, BT)
    if segments is None:
        segments = segments_for_walk(triton.cdiv(d, wbv) * b * h, nt, num_sms(q.device))
    if segments < 1:
        raise ValueError(f"segments must be >= 1, got {segments}")
    seg = triton.cdiv(nt, min(segments, nt))  # chunks per run
    nseg = triton.cdiv(nt, seg)
    if nseg > 1:
        carries = segment_carries(k, v, g, seg, nseg, bk, bv, state_warps, state_stages)
    else:
        carries = torch.zeros(b * h, 1, d, d, dtype=torch.float32, device=q.device)
    o = torch.empty_like(v)
    _segment_walk_kernel[(triton.cdiv(d, wbv), b * h * nseg)](
        q, k, v, g, carries, o, t_len, d, nt, nseg, seg, BT=BT, BK=bk_full, BV=wbv,
        num_warps=walk_warps, num_stages=walk_stages)
    return o

