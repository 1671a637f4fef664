"""Flash attention forward built on the online softmax: prefill (causal or not, GQA) and decode.

``flash_attention(q, k, v, causal)``: one program owns ``BLOCK_M`` queries of one (batch, query
head) and streams K and V in ``BLOCK_N`` blocks, carrying a running row max ``m``, row sum ``l`` and
a float32 accumulator rescaled by ``exp(m_old - m_new)`` (the recurrence of ``kernel.py`` applied to
the output), so the ``[S, S]`` scores never reach memory. The key loop runs in two phases: blocks
that need no mask (fully below the diagonal, or fully inside ``S``), then the few blocks that do.
Causal programs start with the longest rows (reversed block order) so the last wave is short.
Grouped-query attention: query head ``h`` reads key/value head ``h // (Hq // Hkv)``.

``flash_decode(q, k, v)``: one query token per head against a long KV cache is memory bound and has
too few queries to fill the GPU, so the KV length is split across programs (flash decoding): each
program folds one split into a partial ``(m, l, acc)`` for all query heads that share its KV head
(one KV read serves the whole group), and a second kernel merges the partials with the same rescale.

Shapes and dtypes: q ``[B, Hq, Sq, D]``, k and v ``[B, Hkv, Sk, D]`` in bfloat16 or float16 (any
strides), ``Hq`` a multiple of ``Hkv``, ``D <= 256``; the output has q's dtype and shape. Scores are
scaled by ``1/sqrt(D)`` and computed in float32 with ``exp2``.

Example::

    import torch
    from units.online_softmax.attention import flash_attention, flash_decode
    q = torch.randn(2, 32, 4096, 128, device="cuda", dtype=torch.bfloat16)
    k, v = (torch.randn(2, 8, 4096, 128, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    o = flash_attention(q, k, v, causal=True)      # == SDPA(q, k, v, is_causal=True, enable_gqa=True)
    o1 = flash_decode(q[:, :, -1:], k, v)           # [2, 32, 1, 128], attends to every cached key
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

LOG2E = 1.4426950408889634
# Prefill tile and options: 128 queries x 128 keys, 8 warps, 3 stages, TMA descriptor loads and the
# scale folded into the exponent's FMA: the fastest of the H200 sweep of 2026-11-30 at the attention
# tasks' shapes (B4 H32 S4096 D128; bench/results/sweep-attention/attention-sweep-h200-2026-11-30.jsonl): causal
# 449 TFLOP/s (0.87x cuDNN, 1.47x flash SDPA), GQA 0.87x / 1.42x, non-causal 516 (0.86x / 1.50x;
# 528 without fold_scale, inside the sweep's spread). The 128x64 pointer tile ran 0.73-0.78x cuDNN in
# the same sweep.
BLOCK_M, BLOCK_N, NUM_WARPS, NUM_STAGES = 128, 128, 8, 3
USE_TMA, FOLD_SCALE = True, True
# Decode: 64-key tiles with 3 stages keep K and V tiles at 96 KB of shared memory (two programs per
# H200 SM); about 8 programs per SM of 132 give every SM enough loads in flight: 2.6 TB/s of K and V
# at B16 Hq32 Hkv8 L8192 D128, 0.88x flash SDPA
# (bench/results/sweep-attention/attention-decode-sweep-h200-2026-11-30.jsonl).
DECODE_BLOCK_N, DECODE_WARPS, DECODE_STAGES = 64, 4, 3
DECODE_TARGET_PROGRAMS = 8 * 132


@triton.jit
def _attn_block_loop(acc, l_i, m_i, b_q, k_base, v_base, k_desc, v_desc, kv_row, offs_m, offs_d, mask_d,
                     lo, hi, S, sks, skd, svs, svd, qk_scale,
                     MASKED: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_N: tl.constexpr,
                     WARP_SPECIALIZE: tl.constexpr, USE_TMA: tl.constexpr, FOLD_SCALE: tl.constexpr):
    """Fold keys ``[lo, hi)`` into ``(acc, l_i, m_i)``; masks only when ``MASKED``. With ``USE_TMA``
    K and V tiles come through tensor descriptors (rows ``kv_row + key`` of ``[B*Hkv*S, D]``
    views), else through pointers from ``k_base``/``v_base``. With ``WARP_SPECIALIZE`` the
    compiler may split the loop into a loading and a computing warp group. With ``FOLD_SCALE``
    the score scale rides in the exponent's argument (one fused multiply-add per score instead of
    a multiply and a subtract) and the rescaled accumulator is the second MMA's accumulator
    (no separate ``[BM, D]`` add): fewer non-MMA instructions, which bound attention on Hopper."""
    offs_n = tl.arange(0, BLOCK_N)  # [BN]
    for start in tl.range(lo, hi, BLOCK_N, warp_specialize=WARP_SPECIALIZE):
        cols = start + offs_n  # [BN]
        if USE_TMA:  # S is a multiple of BLOCK_N here: no tile crosses into the next head's rows
            b_k = k_desc.load([kv_row + start, 0])
            b_v = v_desc.load([kv_row + start, 0])
        else:
            if MASKED:
                kv_mask = (cols[:, None] < S) & mask_d[None, :]
            else:
                kv_mask = mask_d[None, :]
            b_k = tl.load(k_base + cols[:, None].to(tl.int64) * sks + offs_d[None, :] * skd, mask=kv_mask, other=0.0)
            b_v = tl.load(v_base + cols[:, None].to(tl.int64) * svs + offs_d[None, :] * svd, mask=kv_mask, other=0.0)
        s = tl.dot(b_q, tl.trans(b_k))  # [BM, BN] raw scores
        if not FOLD_SCALE:
            s = s * qk_scale  # log2 units
        if MASKED:
            keep = cols[None, :] < S
            if CAUSAL:
                keep = keep & (cols[None, :] <= offs_m[:, None])
            s = tl.where(keep, s, float("-inf"))
        if FOLD_SCALE:
            m_new = tl.maximum(m_i, tl.max(s, axis=1) * qk_scale)  # log2 units (qk_scale > 0)
            alpha = tl.exp2(m_i - m_new)
            p = tl.exp2(s * qk_scale - m_new[:, None])  # [BM, BN]
            l_i = l_i * alpha + tl.sum(p, axis=1)
            acc = tl.dot(p.to(b_v.dtype), b_v, acc * alpha[:, None])
        else:
            m_new = tl.maximum(m_i, tl.max(s, axis=1))
            alpha = tl.exp2(m_i - m_new)
            p = tl.exp2(s - m_new[:, None])  # [BM, BN]
            l_i = l_i * alpha + tl.sum(p, axis=1)
            acc = acc * alpha[:, None] + tl.dot(p.to(b_v.dtype), b_v)
        m_i = m_new
    return acc, l_i, m_i


@triton.jit
def _flash_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, q_desc, k_desc, v_desc, o_desc, HQ, GROUP, S, D, qk_scale,
                      sqb, sqh, sqs, sqd, skb, skh, sks, skd, svb, svh, svs, svd, sob, soh, sos, sod,
                      CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      BLOCK_D: tl.constexpr, WARP_SPECIALIZE: tl.constexpr, USE_TMA: tl.constexpr,
                      FOLD_SCALE: tl.constexpr):
    pid_m = tl.program_id(0)
    if CAUSAL:
        pid_m = tl.num_programs(0) - 1 - pid_m  # longest rows first
    bh = tl.program_id(1)
    b, h = (bh // HQ).to(tl.int64), (bh % HQ).to(tl.int64)
    hk = h // GROUP
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)  # [BM]
    offs_d = tl.arange(0, BLOCK_D)  # [BD]
    mask_d = offs_d < D
    # TMA views [B*Hq*S, D] and [B*Hkv*S, D]: int32 rows (descriptor offsets are 32-bit)
    q_row = bh * S + pid_m * BLOCK_M
    kv_row = ((bh // HQ) * (HQ // GROUP) + (bh % HQ) // GROUP) * S
    if USE_TMA:
        b_q = q_desc.load([q_row, 0])  # [BM, BD]
    else:
        p_q = q_ptr + b * sqb + h * sqh + offs_m[:, None].to(tl.int64) * sqs + offs_d[None, :] * sqd
        b_q = tl.load(p_q, mask=(offs_m[:, None] < S) & mask_d[None, :], other=0.0)  # [BM, BD]

    m_i = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, BLOCK_D), tl.float32)
    k_base = k_ptr + b * skb + hk * skh
    v_base = v_ptr + b * svb + hk * svh
    if CAUSAL:
        split = pid_m * BLOCK_M  # keys below the block's first query are visible to all its rows
        hi = tl.minimum((pid_m + 1) * BLOCK_M, S)
    else:
        split = (S // BLOCK_N) * BLOCK_N
        hi = S
    acc, l_i, m_i = _attn_block_loop(acc, l_i, m_i, b_q, k_base, v_base, k_desc, v_desc, kv_row, offs_m, offs_d,
                                     mask_d, 0, split, S, sks, skd, svs, svd, qk_scale,
                                     False, CAUSAL, BLOCK_N, WARP_SPECIALIZE, USE_TMA, FOLD_SCALE)
    acc, l_i, m_i = _attn_block_loop(acc, l_i, m_i, b_q, k_base, v_base, k_desc, v_desc, kv_row, offs_m, offs_d,
                                     mask_d, split, hi, S, sks, skd, svs, svd, qk_scale,
                                     True, CAUSAL, BLOCK_N, False, USE_TMA, FOLD_SCALE)
    out = (acc / l_i[:, None]).to(o_ptr.dtype.element_ty)
    if USE_TMA:
        o_desc.store([q_row, 0], out)
    else:
        p_o = o_ptr + b * sob + h * soh + offs_m[:, None].to(tl.int64) * sos + offs_d[None, :] * sod
        tl.store(p_o, out, mask=(offs_m[:, None] < S) & mask_d[None, :])


@triton.jit
def _flash_decode_split_kernel(q_ptr, k_ptr, v_ptr, part_o, part_ml, HKV, GROUP, L, D, SPLIT_LEN, NSPLIT,
                               qk_scale, sqb, sqh, sqd, skb, skh, sks, skd, svb, svh, svs, svd,
                               BLOCK_G: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    pid_s, bhk = tl.program_id(0), tl.program_id(1)
    b, hk = (bhk // HKV).to(tl.int64), (bhk % HKV).to(tl.int64)
    offs_g = tl.arange(0, BLOCK_G)  # [BG] query heads hk * GROUP + g of this KV head
    offs_n = tl.arange(0, BLOCK_N)  # [BN]
    offs_d = tl.arange(0, BLOCK_D)  # [BD]
    mask_g, mask_d = offs_g < GROUP, offs_d < D
    heads = hk * GROUP + offs_g  # [BG]
    b_q = tl.load(q_ptr + b * sqb + heads[:, None] * sqh + offs_d[None, :] * sqd,
                  mask=mask_g[:, None] & mask_d[None, :], other=0.0)  # [BG, BD]
    m_i = tl.full((BLOCK_G,), float("-inf"), tl.float32)
    l_i = tl.zeros((BLOCK_G,), tl.float32)
    acc = tl.zeros((BLOCK_G, BLOCK_D), tl.float32)
    k_base = k_ptr + b * skb + hk * skh
    v_base = v_ptr + b * svb + hk * svh
    lo = pid_s * SPLIT_LEN
    hi = tl.minimum(lo + SPLIT_LEN, L)
    for start in range(lo, hi, BLOCK_N):
        cols = start + offs_n  # [BN]
        kv_mask = (cols[:, None] < hi) & mask_d[None, :]
        b_k = tl.load(k_base + cols[:, None].to(tl.int64) * sks + offs_d[None, :] * skd, mask=kv_mask, other=0.0)
        b_v = tl.load(v_base + cols[:, None].to(tl.int64) * svs + offs_d[None, :] * svd, mask=kv_mask, other=0.0)
        s = tl.dot(b_q, tl.trans(b_k)) * qk_scale  # [BG, BN], log2 units
        s = tl.where(cols[None, :] < hi, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])  # [BG, BN]
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(b_v.dtype), b_v)
        m_i = m_new
    row = (b * HKV * GROUP + heads) * NSPLIT + pid_s  # [BG] partial index of (b, head, split)
    tl.store(part_o + row[:, None] * BLOCK_D + offs_d[None, :], acc, mask=mask_g[:, None])
    tl.store(part_ml + row * 2, m_i, mask=mask_g)
    tl.store(part_ml + row * 2 + 1, l_i, mask=mask_g)


@triton.jit
def _flash_decode_combine_kernel(part_o, part_ml, o_ptr, HQ, D, NSPLIT, sob, soh, sod,
                                 BLOCK_S: tl.constexpr, BLOCK_D: tl.constexpr):
    bh = tl.program_id(0)
    b, h = (bh // HQ).to(tl.int64), (bh % HQ).to(tl.int64)
    offs_s = tl.arange(0, BLOCK_S)  # [BS]
    offs_d = tl.arange(0, BLOCK_D)  # [BD]
    mask_s = offs_s < NSPLIT
    row = bh.to(tl.int64) * NSPLIT + offs_s  # [BS]
    m = tl.load(part_ml + row * 2, mask=mask_s, other=float("-inf"))  # [BS]
    denom = tl.load(part_ml + row * 2 + 1, mask=mask_s, other=0.0)  # [BS]
    acc = tl.load(part_o + row[:, None] * BLOCK_D + offs_d[None, :], mask=mask_s[:, None], other=0.0)  # [BS, BD]
    w = tl.exp2(m - tl.max(m, axis=0))  # [BS]; padded splits weigh exp2(-inf) = 0
    out = tl.sum(acc * w[:, None], axis=0) / tl.sum(denom * w, axis=0)  # [BD]
    tl.store(o_ptr + b * sob + h * soh + offs_d * sod, out.to(o_ptr.dtype.element_ty), mask=offs_d < D)


def _check(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> tuple[int, int]:
    if q.dim() != 4 or k.shape != v.shape or k.shape[0] != q.shape[0] or k.shape[3] != q.shape[3]:
        raise ValueError(f"need q [B, Hq, Sq, D], k and v [B, Hkv, Sk, D]; got "
                         f"{tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}")
    if q.shape[1] % k.shape[1] or q.shape[3] > 256:
        raise ValueError(f"need Hq a multiple of Hkv and D <= 256; got {tuple(q.shape)}, {tuple(k.shape)}")
    return q.shape[1] // k.shape[1], max(16, triton.next_power_of_2(q.shape[3]))


def tma_device_ok(device: torch.device) -> bool:
    """Whether ``device`` has TMA: a Hopper or newer GPU (compute capability 9+), or the CPU, where
    the Triton interpreter emulates descriptors. Elsewhere (Ampere) the pointer path runs."""
    return device.type == "cpu" or (device.type == "cuda" and torch.cuda.get_device_capability(device)[0] >= 9)


def tma_layout_ok(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, block_m: int, block_n: int) -> bool:
    """Whether the TMA path can serve these tensors: each contiguous (viewed as ``[B*H*S, D]``),
    ``D`` a power of two of at least 16 (rows of whole 16-byte units), 16-byte aligned storage
    offsets, and ``S`` a multiple of both tiles (a tile never crosses into the next head)."""
    s, d = q.shape[2], q.shape[3]
    return (all(t.is_contiguous() and (t.storage_offset() * t.element_size()) % 16 == 0 for t in (q, k, v))
            and d >= 16 and d == triton.next_power_of_2(d) and s % block_m == 0 and s % block_n == 0)


def flash_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool, *,
                    block_m: int = BLOCK_M, block_n: int = BLOCK_N, num_warps: int = NUM_WARPS,
                    num_stages: int = NUM_STAGES, warp_specialize: bool = False,
                    use_tma: bool = USE_TMA, fold_scale: bool = FOLD_SCALE) -> torch.Tensor:
    """``softmax(q k^T / sqrt(D) [+ causal mask]) v`` with grouped-query heads.

    Args:
        q: ``[B, Hq, S, D]`` bf16/fp16; k, v: ``[B, Hkv, S, D]`` (``Hq % Hkv == 0``), same dtype.
        causal: mask key ``j > i`` for query ``i`` (same S for queries and keys).
        block_m, block_n, num_warps, num_stages: the tile (powers of two, ``block_m`` a multiple of
            ``block_n`` when ``causal``) and the launch; defaults are the module's.
        warp_specialize: split the unmasked key loop into loading and computing warp groups
            (``tl.range(..., warp_specialize=True)``; Hopper and newer, ignored elsewhere).
        use_tma: load Q, K, V and store O through TMA tensor descriptors (Hopper) when the layout
            allows it (``tma_layout_ok``: contiguous, ``D`` a power of two, ``S`` a multiple of both
            tiles) on a GPU with TMA (``tma_device_ok``); otherwise the pointer path runs.
        fold_scale: apply the ``1/sqrt(D)`` scale inside the exponent's fused multiply-add and
            accumulate ``P V`` onto the rescaled accumulator inside the MMA (``_attn_block_loop``).

    Returns:
        contiguous ``[B, Hq, S, D]`` in q's dtype.
    """
    group, block_d = _check(q, k, v)
    b, hq, s, d = q.shape
    if k.shape[2] != s:
        raise ValueError(f"flash_attention needs as many keys as queries; got {s} and {k.shape[2]}")
    o = torch.empty((b, hq, s, d), dtype=q.dtype, device=q.device)
    if causal and block_m % block_n:
        raise ValueError(f"causal attention needs block_m ({block_m}) to be a multiple of block_n ({block_n})")
    grid = (triton.cdiv(s, block_m), b * hq)
    descs = (None,) * 4
    tma = use_tma and tma_device_ok(q.device) and tma_layout_ok(q, k, v, block_m, block_n)
    if tma:
        views = [t.view(-1, d) for t in (q, k, v, o)]
        blocks = ([block_m, d], [block_n, d], [block_n, d], [block_m, d])
        descs = tuple(TensorDescriptor.from_tensor(t, blk) for t, blk in zip(views, blocks))
    _flash_fwd_kernel[grid](
        q, k, v, o, *descs, hq, group, s, d, LOG2E / math.sqrt(d),
        *q.stride(), *k.stride(), *v.stride(), *o.stride(),
        CAUSAL=causal, BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_D=block_d, WARP_SPECIALIZE=warp_specialize,
        USE_TMA=tma, FOLD_SCALE=fold_scale, num_warps=num_warps, num_stages=num_stages,
    )
    return o


def decode_splits(batch_kv_heads: int, length: int, block_n: int = DECODE_BLOCK_N,
                  target_programs: int = DECODE_TARGET_PROGRAMS) -> tuple[int, int]:
    """``(num_splits, split_len)``: about ``target_programs`` programs in all, each split a
    multiple of ``block_n`` keys, and no empty split."""
    blocks = triton.cdiv(length, block_n)
    want = min(blocks, max(1, triton.cdiv(target_programs, batch_kv_heads)))
    split_len = triton.cdiv(blocks, want) * block_n
    return triton.cdiv(length, split_len), split_len


def flash_decode(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, block_n: int = DECODE_BLOCK_N,
                 num_warps: int = DECODE_WARPS, num_stages: int = DECODE_STAGES,
                 target_programs: int = DECODE_TARGET_PROGRAMS) -> torch.Tensor:
    """One query token per head attending to every cached key (no mask).

    Args:
        q: ``[B, Hq, 1, D]`` bf16/fp16; k, v: ``[B, Hkv, L, D]`` (``Hq % Hkv == 0``), same dtype.
        block_n, num_warps, num_stages: the split kernel's key tile (a power of two >= 16) and launch.
        target_programs: about this many split programs in all (``decode_splits``).

    Returns:
        contiguous ``[B, Hq, 1, D]`` in q's dtype.
    """
    group, block_d = _check(q, k, v)
    b, hq, sq, d = q.shape
    if sq != 1:
        raise ValueError(f"flash_decode takes one query token; got {sq}")
    hkv, length = k.shape[1], k.shape[2]
    nsplit, split_len = decode_splits(b * hkv, length, block_n, target_programs)
    part_o = torch.empty((b * hq * nsplit, block_d), dtype=torch.float32, device=q.device)
    part_ml = torch.empty((b * hq * nsplit, 2), dtype=torch.float32, device=q.device)
    o = torch.empty((b, hq, 1, d), dtype=q.dtype, device=q.device)
    _flash_decode_split_kernel[(nsplit, b * hkv)](
        q, k, v, part_o, part_ml, hkv, group, length, d, split_len, nsplit, LOG2E / math.sqrt(d),
        q.stride(0), q.stride(1), q.stride(3), *k.stride(), *v.stride(),
        BLOCK_G=max(16, triton.next_power_of_2(group)), BLOCK_N=block_n, BLOCK_D=block_d,
        num_warps=num_warps, num_stages=num_stages,
    )
    _flash_decode_combine_kernel[(b * hq,)](
        part_o, part_ml, o, hq, d, nsplit, o.stride(0), o.stride(1), o.stride(3),
        BLOCK_S=max(2, triton.next_power_of_2(nsplit)), BLOCK_D=block_d, num_warps=4,
    )
    return o
