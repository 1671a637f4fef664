"""The consumer warpgroups' key-block loops of ``ws_attention_fwd`` (Gluon, Hopper): the online
softmax step and its two schedules, called by ``kernel._consumer``.

- ``deferred_loop``: per key block, ``S = Q K^T`` (wgmma), the softmax, then ``O += P V`` (wgmma,
  P from registers); with ``DEFER_PV`` block j's ``P V`` stays in flight behind block j+1's
  ``Q K^T``, and the softmax waits for both.
- ``overlap_loop`` (FlashAttention-3's intra-warpgroup pipeline): block j's ``Q K^T`` and block
  j-1's ``P V`` are issued back to back, and block j's softmax runs while that ``P V`` computes;
  ``O`` is rescaled before the ``P V`` that accumulates into it is issued, so no CUDA-core
  instruction writes a wgmma accumulator while it is in flight (ptxas otherwise serializes the
  chain: ``C7512``/``C7515``). ``PINGPONG`` adds an mbarrier turn per block between the two
  warpgroups.

Shapes per warpgroup: Q ``[64, D]`` and the K/V stages ``[BLOCK_N, D]`` bf16 in shared memory;
scores ``[64, BLOCK_N]`` and ``O`` ``[64, D]`` float32 in registers, P ``[64, BLOCK_N]`` bf16 in
the wgmma A-operand layout; ``m`` and ``l`` ``[64]`` float32. K and V slots of a stage are freed on
``k_empty`` / ``v_empty`` (one arrival per warpgroup).
"""

from __future__ import annotations

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    mbarrier,
    warpgroup_mma,
    warpgroup_mma_init,
    warpgroup_mma_wait,
)


@gluon.jit
def kv_blocks(pid_m, S, BLOCK_N: gl.constexpr, CAUSAL: gl.constexpr):
    """``(unmasked, total)`` key blocks of query tile ``pid_m``: blocks ``[0, unmasked)`` need no
    mask, ``[unmasked, total)`` cross the diagonal."""
    if CAUSAL:
        unmasked = (pid_m * 128) // BLOCK_N
        total = ((pid_m + 1) * 128) // BLOCK_N
    else:
        unmasked = S // BLOCK_N
        total = unmasked
    return unmasked, total


@gluon.jit
def attend_block(j, acc, m_i, l_i, q, k_bufs, v_bufs, k_ready, v_ready, k_empty, v_empty, row0, qk_scale,
                 s_layout: gl.constexpr, o_layout: gl.constexpr, p_layout: gl.constexpr, ROWS: gl.constexpr,
                 BLOCK_N: gl.constexpr, KV_STAGES: gl.constexpr, MASKED: gl.constexpr, DEFER_PV: gl.constexpr):
    """Fold key block ``j`` into ``(acc, m_i, l_i)``; ``MASKED`` applies the causal mask.

    With ``DEFER_PV`` the ``P V`` wgmma of block ``j`` is left in flight (``acc`` is then its
    async accumulator) and retired by the next block's wait, so it queues behind this block's
    ``Q K^T`` on the tensor cores; its stage is freed one block later."""
    s = j % KV_STAGES
    phase = (j // KV_STAGES) & 1
    scores = issue_qk(j, q, k_bufs, k_ready, s_layout, ROWS, BLOCK_N, KV_STAGES)  # [64, BN]
    if DEFER_PV:
        scores, acc = warpgroup_mma_wait(num_outstanding=0, deps=(scores, acc))
        prev = (j + KV_STAGES - 1) % KV_STAGES  # block j-1's P V retired: its stage is free
        mbarrier.arrive(k_empty.index(prev), pred=j > 0)
        mbarrier.arrive(v_empty.index(prev), pred=j > 0)
    else:
        scores = warpgroup_mma_wait(num_outstanding=0, deps=(scores,))
    p_op, alpha, m_new, l_i = online_softmax(j, scores, m_i, l_i, row0, qk_scale, s_layout, p_layout, ROWS,
                                             BLOCK_N, MASKED, False)
    acc = acc * gl.convert_layout(alpha, gl.SliceLayout(1, o_layout))[:, None]
    mbarrier.wait(v_ready.index(s), phase)
    acc = warpgroup_mma(p_op, v_bufs.index(s), acc, is_async=True)  # [64, D]
    if not DEFER_PV:
        acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc,))
        mbarrier.arrive(k_empty.index(s))
        mbarrier.arrive(v_empty.index(s))
    return acc, m_new, l_i


@gluon.jit
def deferred_loop(acc, m_i, l_i, q, k_bufs, v_bufs, k_ready, v_ready, k_empty, v_empty, row0, pid_m, S, qk_scale,
                  s_layout: gl.constexpr, o_layout: gl.constexpr, p_layout: gl.constexpr, ROWS: gl.constexpr,
                  BLOCK_N: gl.constexpr, KV_STAGES: gl.constexpr, CAUSAL: gl.constexpr, DEFER_PV: gl.constexpr):
    """Every key block through ``attend_block`` (unmasked blocks, then the diagonal ones). Returns the
    retired ``acc`` and ``l``."""
    if DEFER_PV:
        acc = warpgroup_mma_init(acc)  # carried as an async accumulator
    unmasked, total = kv_blocks(pid_m, S, BLOCK_N, CAUSAL)
    for j in range(unmasked):
        acc, m_i, l_i = attend_block(j, acc, m_i, l_i, q, k_bufs, v_bufs, k_ready, v_ready, k_empty, v_empty,
                                     row0, qk_scale, s_layout, o_layout, p_layout, ROWS, BLOCK_N, KV_STAGES, False,
                                     DEFER_PV)
    for j in range(unmasked, total):
        acc, m_i, l_i = attend_block(j, acc, m_i, l_i, q, k_bufs, v_bufs, k_ready, v_ready, k_empty, v_empty,
                                     row0, qk_scale, s_layout, o_layout, p_layout, ROWS, BLOCK_N, KV_STAGES, True,
                                     DEFER_PV)
    if DEFER_PV:
        acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc,))
        last = (total + KV_STAGES - 1) % KV_STAGES
        mbarrier.arrive(k_empty.index(last), pred=total > 0)
        mbarrier.arrive(v_empty.index(last), pred=total > 0)
    return acc, l_i


@gluon.jit
def issue_qk(j, q, k_bufs, k_ready, s_layout: gl.constexpr, ROWS: gl.constexpr, BLOCK_N: gl.constexpr,
             KV_STAGES: gl.constexpr):
    """Wait for key block ``j`` and issue ``S = Q K_j^T`` (``[64, BLOCK_N]`` float32, async)."""
    s = j % KV_STAGES
    mbarrier.wait(k_ready.index(s), (j // KV_STAGES) & 1)
    zero = gl.zeros([ROWS, BLOCK_N], gl.float32, s_layout)
    return warpgroup_mma(q, k_bufs.index(s).permute((1, 0)), zero, use_acc=False, is_async=True)


@gluon.jit
def online_softmax(j, scores, m_i, l_i, row0, qk_scale, s_layout: gl.constexpr, p_layout: gl.constexpr,
                   ROWS: gl.constexpr, BLOCK_N: gl.constexpr, MASKED: gl.constexpr, FUSED_SCALE: gl.constexpr):
    """Online softmax of block ``j``'s scores: ``(P as the P V wgmma's A operand in bf16, alpha (the
    factor of the old O and l: exp2 of the max's change, scaled), m_new, l)``; ``MASKED`` applies
    the causal mask (exact on any block).
    ``FUSED_SCALE`` keeps ``m`` in raw score units and folds the scale into the exponent's
    argument (``s * c - m * c``, one FMA an element) instead of scaling the scores first."""
    if not FUSED_SCALE:
        scores = scores * qk_scale  # log2 domain: exp2(x * log2(e) / sqrt(D)) = exp(x / sqrt(D))
    if MASKED:
        rows = row0 + gl.arange(0, ROWS, gl.SliceLayout(1, s_layout))
        cols = j * BLOCK_N + gl.arange(0, BLOCK_N, gl.SliceLayout(0, s_layout))
        scores = gl.where(cols[None, :] <= rows[:, None], scores, -float("inf"))
    m_new = gl.maximum(m_i, gl.max(scores, 1))
    if FUSED_SCALE:
        p = gl.exp2(scores * qk_scale - (m_new * qk_scale)[:, None])  # [64, BN]
        alpha = gl.exp2((m_i - m_new) * qk_scale)
    else:
        p = gl.exp2(scores - m_new[:, None])
        alpha = gl.exp2(m_i - m_new)
    l_i = l_i * alpha + gl.sum(p, 1)
    return gl.convert_layout(p.to(gl.bfloat16), p_layout), alpha, m_new, l_i


@gluon.jit
def overlap_step(j, acc, p_prev, alpha_prev, m_i, l_i, q, k_bufs, v_bufs, k_ready, v_ready, k_empty, v_empty,
                 sched, row0, qk_scale, s_layout: gl.constexpr, o_layout: gl.constexpr, p_layout: gl.constexpr,
                 WG: gl.constexpr, ROWS: gl.constexpr, BLOCK_N: gl.constexpr, KV_STAGES: gl.constexpr,
                 MASKED: gl.constexpr, PINGPONG: gl.constexpr, FUSED_SCALE: gl.constexpr):
    """Block ``j`` (>= 1): issue its ``Q K^T`` and block j-1's ``P V`` back to back, then run its
    softmax while that ``P V`` computes. ``acc`` comes in retired and goes out retired."""
    if PINGPONG:
        mbarrier.wait(sched.index(WG), (j - 1) & 1)  # this warpgroup's turn on the tensor cores
    scores = issue_qk(j, q, k_bufs, k_ready, s_layout, ROWS, BLOCK_N, KV_STAGES)
    acc = acc * gl.convert_layout(alpha_prev, gl.SliceLayout(1, o_layout))[:, None]
    prev = (j - 1) % KV_STAGES
    mbarrier.wait(v_ready.index(prev), ((j - 1) // KV_STAGES) & 1)
    acc = warpgroup_mma(p_prev, v_bufs.index(prev), acc, is_async=True)  # [64, D]
    if PINGPONG:
        mbarrier.arrive(sched.index(1 - WG))  # the other warpgroup may issue its wgmmas
    scores = warpgroup_mma_wait(num_outstanding=1, deps=(scores,))  # Q K_j^T retired, P V in flight
    mbarrier.arrive(k_empty.index(j % KV_STAGES))
    p, alpha, m_i, l_i = online_softmax(j, scores, m_i, l_i, row0, qk_scale, s_layout, p_layout, ROWS, BLOCK_N,
                                        MASKED, FUSED_SCALE)
    acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc,))
    mbarrier.arrive(v_empty.index(prev))
    return acc, p, alpha, m_i, l_i


@gluon.jit
def overlap_loop(acc, m_i, l_i, q, k_bufs, v_bufs, k_ready, v_ready, k_empty, v_empty, sched, row0, pid_m, S,
                 qk_scale, s_layout: gl.constexpr, o_layout: gl.constexpr, p_layout: gl.constexpr,
                 WG: gl.constexpr, ROWS: gl.constexpr, BLOCK_N: gl.constexpr, KV_STAGES: gl.constexpr,
                 CAUSAL: gl.constexpr, PINGPONG: gl.constexpr, FUSED_SCALE: gl.constexpr):
    """Every key block through ``overlap_step``: block 0's ``Q K^T`` and softmax first, the last
    block's ``P V`` after the loop. Returns the retired ``acc`` and ``l``."""
    unmasked, total = kv_blocks(pid_m, S, BLOCK_N, CAUSAL)
    scores = issue_qk(0, q, k_bufs, k_ready, s_layout, ROWS, BLOCK_N, KV_STAGES)
    scores = warpgroup_mma_wait(num_outstanding=0, deps=(scores,))
    mbarrier.arrive(k_empty.index(0))
    p, alpha, m_i, l_i = online_softmax(0, scores, m_i, l_i, row0, qk_scale, s_layout, p_layout, ROWS, BLOCK_N,
                                        CAUSAL, FUSED_SCALE)
    if PINGPONG:
        if WG == 1:
            mbarrier.arrive(sched.index(0))  # warpgroup 0 issues first
    for j in range(1, unmasked):
        acc, p, alpha, m_i, l_i = overlap_step(j, acc, p, alpha, m_i, l_i, q, k_bufs, v_bufs, k_ready, v_ready,
                                               k_empty, v_empty, sched, row0, qk_scale, s_layout, o_layout,
                                               p_layout, WG, ROWS, BLOCK_N, KV_STAGES, False, PINGPONG,
                                               FUSED_SCALE)
    for j in range(gl.maximum(unmasked, 1), total):
        acc, p, alpha, m_i, l_i = overlap_step(j, acc, p, alpha, m_i, l_i, q, k_bufs, v_bufs, k_ready, v_ready,
                                               k_empty, v_empty, sched, row0, qk_scale, s_layout, o_layout,
                                               p_layout, WG, ROWS, BLOCK_N, KV_STAGES, True, PINGPONG,
                                               FUSED_SCALE)
    last = (total - 1) % KV_STAGES
    acc = acc * gl.convert_layout(alpha, gl.SliceLayout(1, o_layout))[:, None]
    mbarrier.wait(v_ready.index(last), ((total - 1) // KV_STAGES) & 1)
    acc = warpgroup_mma(p, v_bufs.index(last), acc, is_async=True)
    acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc,))
    mbarrier.arrive(v_empty.index(last))
    return acc, l_i
