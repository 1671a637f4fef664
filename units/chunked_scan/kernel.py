"""Chunked simple-GLA forward: chunk-parallel attention inside a chunk, a carried [D, D] state across.

Computes ``o_t = sum_{s <= t} exp(G_t - G_s) (q_t . k_s) v_s`` (``G = cumsum(g)``, see
``reference.py``) for q, k, v bfloat16 ``[B, H, T, D]`` and log-decays g float32 ``[B, H, T]``.

One program per (V-block, batch x head) walks the sequence in chunks of ``BT = 64`` tokens,
keeping the state ``S = sum_s exp(G_end - G_s) k_s^T v_s`` (float32 ``[D, BV]``) in registers.
Per chunk, with ``G`` the chunk-local cumulative log-decay (so every exponent below is <= 0 and
nothing overflows, however long the sequence):

- inter-chunk: ``o = (q @ S) * exp(G)[:, None]``                          (tensor cores)
- intra-chunk: ``o += ((q @ k^T) * exp(G_i - G_j) [j <= i]) @ v``         (tensor cores)
- state:       ``S = exp(G_last) * S + k^T @ (v * exp(G_last - G)[:, None])``

Four bf16 MMAs per chunk replace 64 rank-1 updates and 64 matrix-vector products of the
token-by-token recurrence; the masked decay matrix is built in log space from one cumsum.

Long sequences with few heads (``chunk_simple_gla_parallel``): the walk above has only
``cdiv(D, 64) * B * H`` programs (32 at B=1, H=16, D=128 for 132 SMs, each walking 512 chunks at
T = 32768). The two-pass variant splits it as FLA does (``chunk_fwd_h`` + ``chunk_fwd_o``): a state
kernel walks the chunks with one MMA per chunk and stores every chunk's entering state ``S`` (bf16
``[B*H, NT, D, D]``), then an output kernel, parallel over chunks, runs the inter- and intra-chunk
products above. The state walk itself is cut into segments walked in parallel from zero; a small
carry kernel chains the segments' final states (``C_{s+1} = exp(decay_s) C_s + end_s``, elementwise
since the decay is a scalar), and the output kernel adds each chunk's decayed carry to its local
state. ``chunk_simple_gla_auto`` picks between the walk and the two-pass variant. ``segmented.py``
walks the segments themselves from their carries, with no per-chunk state in DRAM (faster still).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

# The SM count of the dispatch rule: the persistent_splitk unit's (CPU_NUM_SMS = 4 under the interpreter).
from units.persistent_splitk.kernel import CPU_NUM_SMS, num_sms  # noqa: F401

# Chunk 64 (FLA's choice: the intra-chunk [64, 64] matrix fits registers and feeds MMAs). BV = 64
# splits D = 128 into 2 programs per head (256 programs at B=8, H=16 for 132 SMs). On the H200 this
# ran 111 TFLOP/s, 12.5x the recurrent kernel, and simple GLA at 2.28x FLA (2026-11-30).
BT, BV = 64, 64
NUM_WARPS, NUM_STAGES = 4, 2


@triton.jit
def chunk_output(b_q, b_k, b_v, b_G, b_S, causal):
    """One chunk's output block ``[BT, BV]`` (float32) from its q, k ``[BT, BK]``, v ``[BT, BV]``, the
    chunk-local cumulative log-decay ``b_G [BT]`` and the state entering the chunk ``b_S [BK, BV]``:
    inter-chunk ``(q @ S) * exp(G)`` plus intra-chunk ``((q @ k^T) * exp(G_i - G_j) [j <= i]) @ v``."""
    b_o = tl.dot(b_q, b_S.to(b_q.dtype)) * tl.exp(b_G)[:, None]  # [BT, BV]
    b_A = tl.dot(b_q, tl.trans(b_k))  # [BT, BT]
    b_A = b_A * tl.exp(tl.where(causal, b_G[:, None] - b_G[None, :], float("-inf")))
    return tl.dot(b_A.to(b_v.dtype), b_v, b_o)


@triton.jit
def next_state(b_k, b_v, b_G, b_G_last, b_S):
    """The float32 state leaving a chunk: ``exp(G_last) * S + k^T @ (v * exp(G_last - G))``."""
    b_vd = (b_v * tl.exp(b_G_last - b_G)[:, None]).to(b_k.dtype)  # [BT, BV]
    return b_S * tl.exp(b_G_last) + tl.dot(tl.trans(b_k), b_vd)  # [BK, BV]


@triton.jit
def load_chunk(x, base, t, mask_t, offs, mask, D):
    """One chunk's rows ``t [BT]`` of a ``[T, D]`` head at ``base``, columns ``offs``: ``[BT, len(offs)]``,
    0 where masked."""
    return tl.load(x + base + t[:, None] * D + offs[None, :], mask=mask_t[:, None] & mask[None, :], other=0.0)


@triton.jit
def load_chunk_decay(g, i_bh, t, mask_t, T):
    """One chunk's log-decays ``g [BT]`` of head ``i_bh`` (0 for padded tokens) and their chunk-local
    cumulative sum ``G [BT]``."""
    b_g = tl.load(g + i_bh.to(tl.int64) * T + t, mask=mask_t, other=0.0)  # [BT]
    return b_g, tl.cumsum(b_g, axis=0)


@triton.jit
def walk_step(q, k, v, g, o, base, i_bh, t, offs_k, offs_v, mask_k, mask_v, causal, T, D, b_S):
    """One chunk of a walk: the outputs of tokens ``t [BT]`` (V-block ``offs_v``) from the state
    entering the chunk ``b_S`` (float32 ``[BK, BV]``), stored; returns the state leaving it."""
    mask_t = t < T
    b_q = load_chunk(q, base, t, mask_t, offs_k, mask_k, D)  # [BT, BK]
    b_k = load_chunk(k, base, t, mask_t, offs_k, mask_k, D)  # [BT, BK]
    b_v = load_chunk(v, base, t, mask_t, offs_v, mask_v, D)  # [BT, BV]
    b_g, b_G = load_chunk_decay(g, i_bh, t, mask_t, T)  # [BT] log-decays, chunk-local cumsum
    b_G_last = tl.sum(b_g, axis=0)  # padded g are 0, so this is G at the last real token
    b_o = chunk_output(b_q, b_k, b_v, b_G, b_S, causal)  # [BT, BV]
    tl.store(o + base + t[:, None] * D + offs_v[None, :], b_o.to(o.dtype.element_ty),
             mask=mask_t[:, None] & mask_v[None, :])
    return next_state(b_k, b_v, b_G, b_G_last, b_S)  # [BK, BV]


@triton.jit
def _chunk_simple_gla_fwd_kernel(
    q, k, v, g, o, T, D,
    BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr,
):
    i_v, i_bh = tl.program_id(0), tl.program_id(1)
    base = i_bh.to(tl.int64) * T * D
    offs_t = tl.arange(0, BT)  # [BT]
    offs_k = tl.arange(0, BK)  # [BK]
    offs_v = i_v * BV + tl.arange(0, BV)  # [BV]
    mask_k, mask_v = offs_k < D, offs_v < D
    causal = offs_t[:, None] >= offs_t[None, :]  # [BT, BT]

    b_S = tl.zeros((BK, BV), dtype=tl.float32)  # state at the chunk start
    for i_t in range(tl.cdiv(T, BT)):
        b_S = walk_step(q, k, v, g, o, base, i_bh, i_t * BT + offs_t, offs_k, offs_v, mask_k, mask_v, causal, T, D,
                        b_S)


def chunk_simple_gla(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    """Simple GLA / RetNet-style scalar-decay linear attention forward.

    Args:
        q, k, v: bfloat16 ``[B, H, T, D]``, contiguous (any T; D <= 256).
        g: float32 ``[B, H, T]`` log-decay per token, ``<= 0`` (e.g. ``F.logsigmoid(x)``).

    Returns:
        bfloat16 ``[B, H, T, D]``: ``o_t = sum_{s <= t} exp(G_t - G_s) (q_t . k_s) v_s``.

    Example::

        q, k, v = (torch.randn(2, 4, 1000, 64, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        g = torch.nn.functional.logsigmoid(torch.randn(2, 4, 1000, device="cuda") + 4)
        o = chunk_simple_gla(q * 64 ** -0.5, k, v, g)  # [2, 4, 1000, 64]
    """
    q, k, v, g = prepared_inputs(q, k, v, g)
    b, h, t_len, d = q.shape
    o = torch.empty_like(v)
    bk = max(16, triton.next_power_of_2(d))
    bv = min(BV, bk)
    grid = (triton.cdiv(d, bv), b * h)
    _chunk_simple_gla_fwd_kernel[grid](q, k, v, g, o, t_len, d, BT=BT, BK=bk, BV=bv,
                                       num_warps=NUM_WARPS, num_stages=NUM_STAGES)
    return o


# Two-pass variant (chunk_simple_gla_parallel): BK = BV = 64 (4 state programs per head at D = 128,
# 64 at B=1, H=16), 4 warps, 3 stages: the fastest of the H200 chunked-scan sweep of 2026-11-30
# (bench/results/sweep-chunked-scan/chunked-scan-stages-sweep-h200-2026-11-30.jsonl, one segment) at B1 H16 T32768
# D128, 0.859 ms = 1.10x FLA's 0.948 ms; the same tile in 2 stages ran 1.093 ms, 8 warps 1.272 ms.
PAR_BK, PAR_BV = 64, 64
PAR_NUM_WARPS, PAR_NUM_STAGES = 4, 3
# Segments of the state walk (segments_for): enough that the state kernel launches about
# SEGMENT_PROGRAMS_PER_SM programs per SM. H200, 2026-11-30 (chunked-scan sweep, three interleaved
# rounds, bench/results/sweep-chunked-scan/chunked-scan-segments-sweep-h200-2026-11-30.jsonl) at B1 H16 T32768
# D128 (64 state programs of 64x64 per segment): 1 segment 0.779 ms, 2: 0.600, 4: 0.535 (256
# programs, 1.31x FLA's 0.700 ms), 8: 0.567, 16: 0.560, 32: 0.587. Two per SM gives the 4.
SEGMENT_PROGRAMS_PER_SM = 2
CARRY_NUM_WARPS = 4  # the carry kernel: elementwise [BK, BV] steps, one per segment
# Dispatch (chunk_simple_gla_auto): the two-pass variant when the walk's program count is below
# the SM count and there are at least MIN_PARALLEL_CHUNKS chunks. Same sweep: at B1 H16 T32768 D128
# (32 walk programs, 512 chunks) the walk ran 1.837 ms, the two-pass 0.859 ms; at B8 H16 T2048 D128
# (256 walk programs, 32 chunks) the walk 0.176 ms, the two-pass at best 0.273 ms. The threshold of
# 8 chunks itself is not measured.
MIN_PARALLEL_CHUNKS = 8


@triton.jit
def chunk_states_kernel(
    k, v, g, h, gcum, ends, seg_decay, T, D, NT, NSEG, SEG,
    BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr, MULTI_SEG: tl.constexpr, STORE_STATES: tl.constexpr = True,
):
    # h[bh, c, kblock, vblock] = state entering chunk c (bf16), counted from the start of c's segment
    # of SEG chunks (the whole sequence when NSEG == 1). With MULTI_SEG also gcum[bh, c] = log-decay
    # from the segment start to chunk c, ends[bh, s] = the segment's final local state (float32),
    # seg_decay[bh, s] = the segment's total log-decay. Without STORE_STATES only ends and seg_decay.
    i_k, i_v, i_bs = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    i_bh, i_s = i_bs // NSEG, i_bs % NSEG
    c0 = i_s * SEG
    c1 = tl.minimum(c0 + SEG, NT)
    base = i_bh.to(tl.int64) * T * D
    offs_t = tl.arange(0, BT)  # [BT]
    offs_k = i_k * BK + tl.arange(0, BK)  # [BK]
    offs_v = i_v * BV + tl.arange(0, BV)  # [BV]
    mask_k, mask_v = offs_k < D, offs_v < D
    mask_kv = mask_k[:, None] & mask_v[None, :]  # [BK, BV]
    tile = offs_k[:, None] * D + offs_v[None, :]  # [BK, BV] offsets in a [D, D] state
    p_h = h + (i_bh.to(tl.int64) * NT + c0) * D * D + tile  # [BK, BV] chunk c0
    first_tile = (i_k == 0) & (i_v == 0)  # one program of the segment writes its scalars

    b_S = tl.zeros((BK, BV), dtype=tl.float32)  # local state at the chunk start
    g_acc = tl.sum(tl.zeros((BT,), dtype=tl.float32), axis=0)  # float32 scalar 0: log-decay since the segment start
    for i_t in range(c0, c1):
        if STORE_STATES:
            tl.store(p_h, b_S.to(h.dtype.element_ty), mask=mask_kv)
        if MULTI_SEG and STORE_STATES:
            tl.store(gcum + i_bh.to(tl.int64) * NT + i_t, g_acc, mask=first_tile)
        p_h += D * D  # next chunk
        t = i_t * BT + offs_t  # [BT]
        mask_t = t < T
        b_k = load_chunk(k, base, t, mask_t, offs_k, mask_k, D)  # [BT, BK]
        b_v = load_chunk(v, base, t, mask_t, offs_v, mask_v, D)  # [BT, BV]
        b_g, b_G = load_chunk_decay(g, i_bh, t, mask_t, T)  # [BT] log-decays, chunk-local cumsum
        b_G_last = tl.sum(b_g, axis=0)  # padded g are 0, so this is G at the last real token
        b_S = next_state(b_k, b_v, b_G, b_G_last, b_S)  # [BK, BV]
        g_acc += b_G_last
    if MULTI_SEG:
        p_end = ends + i_bs.to(tl.int64) * D * D + tile
        tl.store(p_end, b_S, mask=mask_kv)
        tl.store(seg_decay + i_bs, g_acc, mask=first_tile)


@triton.jit
def segment_carry_kernel(ends, seg_decay, carries, D, NSEG, BK: tl.constexpr, BV: tl.constexpr):
    # carries[bh, s] = true state entering segment s: C_0 = 0, C_{s+1} = exp(decay_s) C_s + end_s.
    i_k, i_v, i_bh = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    offs_k = i_k * BK + tl.arange(0, BK)  # [BK]
    offs_v = i_v * BV + tl.arange(0, BV)  # [BV]
    mask_kv = (offs_k < D)[:, None] & (offs_v < D)[None, :]
    tile = offs_k[:, None] * D + offs_v[None, :]  # [BK, BV]
    b_C = tl.zeros((BK, BV), dtype=tl.float32)
    for i_s in range(NSEG):
        row = i_bh.to(tl.int64) * NSEG + i_s
        tl.store(carries + row * D * D + tile, b_C.to(carries.dtype.element_ty), mask=mask_kv)
        b_end = tl.load(ends + row * D * D + tile, mask=mask_kv, other=0.0)  # [BK, BV] float32
        b_C = b_C * tl.exp(tl.load(seg_decay + row)) + b_end


@triton.jit
def _chunk_output_kernel(
    q, k, v, g, h, gcum, carries, o, T, D, NT, NSEG, SEG,
    BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr, MULTI_SEG: tl.constexpr,
):
    # One chunk x one V-block: o = (q @ S) * exp(G) + ((q @ k^T) * exp(G_i - G_j) [j <= i]) @ v, with
    # S = h[chunk] (+ exp(gcum[chunk]) * carries[segment] when the state pass ran in segments).
    i_t, i_v, i_bh = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    base = i_bh.to(tl.int64) * T * D
    offs_t = tl.arange(0, BT)  # [BT]
    offs_k = tl.arange(0, BK)  # [BK] all of K: q @ S contracts over it
    offs_v = i_v * BV + tl.arange(0, BV)  # [BV]
    mask_k, mask_v = offs_k < D, offs_v < D
    causal = offs_t[:, None] >= offs_t[None, :]  # [BT, BT]

    t = i_t * BT + offs_t  # [BT]
    mask_t = t < T
    b_q = load_chunk(q, base, t, mask_t, offs_k, mask_k, D)  # [BT, BK]
    b_k = load_chunk(k, base, t, mask_t, offs_k, mask_k, D)  # [BT, BK]
    b_v = load_chunk(v, base, t, mask_t, offs_v, mask_v, D)  # [BT, BV]
    _, b_G = load_chunk_decay(g, i_bh, t, mask_t, T)  # [BT] chunk-local cumulative log-decay
    tile = offs_k[:, None] * D + offs_v[None, :]  # [BK, BV]
    mask_kv = mask_k[:, None] & mask_v[None, :]
    p_h = h + (i_bh.to(tl.int64) * NT + i_t) * D * D + tile
    b_S = tl.load(p_h, mask=mask_kv, other=0.0)  # [BK, BV] bf16
    if MULTI_SEG:
        p_c = carries + (i_bh.to(tl.int64) * NSEG + i_t // SEG) * D * D + tile
        b_C = tl.load(p_c, mask=mask_kv, other=0.0).to(tl.float32)  # [BK, BV]
        b_S = b_S.to(tl.float32) + tl.exp(tl.load(gcum + i_bh.to(tl.int64) * NT + i_t)) * b_C

    b_o = chunk_output(b_q, b_k, b_v, b_G, b_S, causal)  # [BT, BV]
    tl.store(o + base + t[:, None] * D + offs_v[None, :], b_o.to(o.dtype.element_ty),
             mask=mask_t[:, None] & mask_v[None, :])


def prepared_inputs(q, k, v, g):
    """``q, k, v`` contiguous and ``g`` float32 contiguous, after checking the shapes agree."""
    if q.shape != k.shape or q.shape != v.shape or g.shape != q.shape[:3]:
        raise ValueError(f"need q, k, v [B, H, T, D] and g [B, H, T]; got {tuple(q.shape)}, "
                         f"{tuple(k.shape)}, {tuple(v.shape)}, {tuple(g.shape)}")
    return q.contiguous(), k.contiguous(), v.contiguous(), g.float().contiguous()


def chunk_simple_gla_parallel(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor, *,
                              block_k: int = PAR_BK, block_v: int = PAR_BV, num_warps: int = PAR_NUM_WARPS,
                              num_stages: int = PAR_NUM_STAGES, segments: int | None = None) -> torch.Tensor:
    """Simple GLA forward in two passes: every chunk's state, then the outputs in parallel over chunks.

    Same function, arguments and result as ``chunk_simple_gla`` and the same per-chunk arithmetic
    (bf16 state for ``q @ S``, bf16 ``v * decay`` for ``k^T @ v``, float32 accumulation): in one
    segment the two agree to float32 summation order; in several, the state entering a chunk (local
    state plus carry term) is rounded to bf16 once more, as accurate against a float64 reference
    but no longer bit-close to the walk. For long sequences with few heads (see
    ``chunk_simple_gla_auto``; its time at B1 H16 T32768 D128 against FLA and the walk:
    BENCHMARKS.md, Chunked scan).

    Pass 1, grid ``(cdiv(D, BK), cdiv(D, BV), B*H*segments)``: walks the chunks of one segment of a
    head with a float32 ``[BK, BV]`` state block and stores the state entering each chunk, counted
    from the segment start, into ``h`` (q's dtype, ``[B*H, NT, D, D]``, ``NT = cdiv(T, 64)``;
    2 * NT * D^2 bytes per head, 256 MiB at B=1, H=16, T=32768, D=128). With ``segments > 1`` the
    segments' final states and total decays go to small float32 buffers, and a carry kernel, grid
    ``(cdiv(D, BK), cdiv(D, BV), B*H)``, walks the segments (``C_{s+1} = exp(decay_s) C_s +
    end_s``); the state entering chunk ``c`` of segment ``s`` is then ``h[c] + exp(G_c) C_s``, ``G_c``
    the log-decay from the segment start to ``c``. The sequential chain per program shrinks from NT
    chunks to ``NT / segments`` plus ``segments`` carry steps. Pass 2, grid ``(NT, cdiv(D, BV),
    B*H)``: one chunk and V-block per program, adding the carry term when there are segments.

    Args:
        q, k, v: bfloat16 ``[B, H, T, D]``, contiguous (any T; D <= 256).
        g: float32 ``[B, H, T]`` log-decay per token, ``<= 0``.
        block_k, block_v: state tile of pass 1 (powers of two >= 16; clamped to
            ``next_power_of_2(D)``); ``block_v`` is also pass 2's V-block.
        num_warps, num_stages: launch options of the state and output kernels.
        segments: segments of the state walk (>= 1; at most one per chunk, empty ones dropped);
            None for ``segments_for`` on q's device.

    Returns:
        bfloat16 ``[B, H, T, D]``: ``o_t = sum_{s <= t} exp(G_t - G_s) (q_t . k_s) v_s``.

    Example::

        q, k, v = (torch.randn(1, 16, 32768, 128, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        g = torch.nn.functional.logsigmoid(torch.randn(1, 16, 32768, device="cuda") + 4)
        o = chunk_simple_gla_parallel(q * 128 ** -0.5, k, v, g)  # [1, 16, 32768, 128]
        o = chunk_simple_gla_parallel(q * 128 ** -0.5, k, v, g, segments=8)
    """
    q, k, v, g = prepared_inputs(q, k, v, g)
    for name, block in (("block_k", block_k), ("block_v", block_v)):
        if block < 16 or block & (block - 1):
            raise ValueError(f"{name} must be a power of two >= 16, got {block}")
    b, h, t_len, d = q.shape
    o = torch.empty_like(v)
    bk_full = max(16, triton.next_power_of_2(d))
    bk, bv = min(block_k, bk_full), min(block_v, bk_full)
    nt = triton.cdiv(t_len, BT)
    if segments is None:
        segments = segments_for(triton.cdiv(d, bk) * triton.cdiv(d, bv) * b * h, nt, num_sms(q.device))
    if segments < 1:
        raise ValueError(f"segments must be >= 1, got {segments}")
    seg = triton.cdiv(nt, min(segments, nt))  # chunks per segment
    nseg = triton.cdiv(nt, seg)
    multi = nseg > 1
    states = torch.empty(b * h, nt, d, d, dtype=q.dtype, device=q.device)
    if multi:
        gcum = torch.empty(b * h, nt, dtype=torch.float32, device=q.device)
        ends = torch.empty(b * h, nseg, d, d, dtype=torch.float32, device=q.device)
        seg_decay = torch.empty(b * h, nseg, dtype=torch.float32, device=q.device)
        carries = torch.empty(b * h, nseg, d, d, dtype=q.dtype, device=q.device)
    else:  # unused by the kernels (MULTI_SEG off): any tensor fills the pointer slots
        gcum = ends = seg_decay = carries = states
    grid_k, grid_v = triton.cdiv(d, bk), triton.cdiv(d, bv)
    chunk_states_kernel[(grid_k, grid_v, b * h * nseg)](
        k, v, g, states, gcum, ends, seg_decay, t_len, d, nt, nseg, seg, BT=BT, BK=bk, BV=bv, MULTI_SEG=multi,
        num_warps=num_warps, num_stages=num_stages)
    if multi:
        segment_carry_kernel[(grid_k, grid_v, b * h)](ends, seg_decay, carries, d, nseg, BK=bk, BV=bv,
                                                       num_warps=CARRY_NUM_WARPS)
    _chunk_output_kernel[(nt, grid_v, b * h)](
        q, k, v, g, states, gcum, carries, o, t_len, d, nt, nseg, seg, BT=BT, BK=bk_full, BV=bv,
        MULTI_SEG=multi, num_warps=num_warps, num_stages=num_stages)
    return o


def segments_for(programs: int, chunks: int, sms: int) -> int:
    """Segments of the two-pass state walk: about ``SEGMENT_PROGRAMS_PER_SM * sms`` state programs
    in all from ``programs`` per segment, at least 1 and at most ``chunks``.

    On the H200 (132 SMs) at B1 H16 D128 (64 state programs of 64x64): 4 segments."""
    return max(1, min(chunks, round(SEGMENT_PROGRAMS_PER_SM * sms / max(programs, 1))))


def parallel_pays(b: int, h: int, t_len: int, d: int, sms: int) -> bool:
    """The dispatch rule of ``chunk_simple_gla_auto``: True when ``chunk_simple_gla`` would launch
    fewer programs than ``sms`` (``cdiv(D, BV) * B * H``, BV = min(64, next_power_of_2(D))) and the
    sequence has at least ``MIN_PARALLEL_CHUNKS`` chunks of 64 tokens.

    On the H200 (132 SMs): B=1, H=16, T=32768, D=128 -> 32 programs, 512 chunks: two-pass;
    B=8, H=16, T=2048, D=128 -> 256 programs: the walk.
    """
    bv = min(BV, max(16, triton.next_power_of_2(d)))
    return triton.cdiv(d, bv) * b * h < sms and triton.cdiv(t_len, BT) >= MIN_PARALLEL_CHUNKS


def chunk_simple_gla_auto(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    """``chunk_simple_gla_parallel`` when ``parallel_pays`` (few programs, many chunks), else
    ``chunk_simple_gla``; same arguments and result. On the H200 the rule picks the faster of the
    two at both simple-GLA task shapes (the Chunked scan tables of BENCHMARKS.md).

    Example::

        o = chunk_simple_gla_auto(q, k, v, g)  # q, k, v bf16 [B, H, T, D]; g fp32 [B, H, T]
    """
    q, k, v, g = prepared_inputs(q, k, v, g)
    b, h, t_len, d = q.shape
    if parallel_pays(b, h, t_len, d, num_sms(q.device)):
        return chunk_simple_gla_parallel(q, k, v, g)
    return chunk_simple_gla(q, k, v, g)


LOG_DECAY_BLOCK = 1024  # elements per program of the gate kernel (1/D of the q/k/v traffic)


@triton.jit
def _log_decay_kernel(gate_ptr, g_ptr, n, bias, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # [BLOCK]
    mask = offs < n
    y = tl.load(gate_ptr + offs, mask=mask, other=0.0).to(tl.float32) + bias
    g = tl.minimum(y, 0.0) - tl.log(1.0 + tl.exp(-tl.abs(y)))  # logsigmoid(y) without overflow
    tl.store(g_ptr + offs, g, mask=mask)


def log_decay(gate: torch.Tensor, bias: float) -> torch.Tensor:
    """Per-token log-decay ``g = logsigmoid(gate + bias)`` as float32, the ``g`` of the scans above.

    Args:
        gate: ``[B, H, T]`` raw gate, any float dtype.
        bias: added before the logsigmoid (e.g. 4.0 keeps the decay near 1 at zero gate).

    Returns:
        float32 ``[B, H, T]``, ``<= 0``, computed as ``min(y, 0) - log(1 + exp(-|y|))``.

    Example::

        g = log_decay(torch.randn(2, 4, 1000, device="cuda"), 4.0)  # float32 [2, 4, 1000]
    """
    gate = gate.contiguous()
    g = torch.empty(gate.shape, dtype=torch.float32, device=gate.device)
    n = gate.numel()
    _log_decay_kernel[(triton.cdiv(n, LOG_DECAY_BLOCK),)](gate, g, n, float(bias), BLOCK=LOG_DECAY_BLOCK, num_warps=4)
    return g
