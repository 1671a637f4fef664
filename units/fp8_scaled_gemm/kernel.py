"""FP8 e4m3 GEMM with per-tensor, per-row and 128x128 block scales, bf16 output.

``out[m, n] = sum_k (a[m, k] * sa) * (b[k, n] * sb)`` where ``a`` and ``b`` hold float8_e4m3fn
codes and the scales ``sa``/``sb`` are float32. Three scalings share one kernel:

- ``fp8_gemm_per_tensor``: one scale per operand, applied once in the epilogue;
- ``fp8_gemm_per_row``: ``scale_a_rows [M]`` and ``scale_b_cols [N]``, an outer product applied
  once in the epilogue (the scales do not vary along K, so they factor out of the sum);
- ``fp8_gemm_block``: DeepSeek-V3 style ``scale_a [ceil(M/128), ceil(K/128)]`` and
  ``scale_b [ceil(K/128), ceil(N/128)]``; the scales vary along K, so each 128-wide K step's
  partial product is scaled and added to the float32 accumulator ("promotion" to CUDA cores).

The fp8 operands go straight into ``tl.dot`` (wgmma fp8 on sm_90: twice the bf16 rate) with a
float32 accumulator. Hopper's fp8 wgmma reads both operands K-major from shared memory, so the
``b`` the kernel sees is a K-major view of ``[K, N]`` (``w.t()`` of a contiguous ``[N, K]`` weight).
With a row-major ``b`` Triton 3.x transposes in registers before the shared-memory store and turns
off the pipelined load for that operand (triton-lang/triton PR 6875 added a warning for exactly
this), so the wrapper copies a row-major ``b`` to K-major first: one extra pass over ``K*N`` bytes,
about 3% of an 8192^3 GEMM. Store static weights as ``[N, K]`` and pass ``w.t()`` to skip it.

Accumulation variants (keywords of every public function; see ``_launch`` and the README): where
the wgmma's reduced-precision fp8 accumulator is added into float32 (``imprecise_acc`` inside one
``tl.dot``, or ``promote_every`` K tiles through a second accumulator), and how tiles reach shared
memory (``tma``, ``warp_specialize``). The defaults are the configuration measured in the README.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from units.grouped_tile_order.kernel import grouped_tile

# 128x128x128 tiles, 4 stages, 8 warps (4 x 32 KiB of shared memory). H200 sweep at 8192^3, per-tensor
# scales, accumulating imprecisely over the whole K loop (2026-11-30): 1.249 ms (881 TFLOP/s) against
# 1.429 ms for 128x256x128 in 3 stages, 1.321 ms for 128x128x128 in 3 stages with 4 warps, and
# 1.651 ms for 128x256x64; with promotion every BLOCK_K, 696 TFLOP/s.
BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M = 128, 128, 128, 8
NUM_STAGES, NUM_WARPS = 4, 8
# Two-level accumulation, promoted into float32 every 4 K tiles (512 products). H200 sweep of
# 2026-11-30 (bench/results/sweep-fp8/fp8-sweep-h200-2026-11-30.jsonl), 8192^3 per-tensor: every tile
# (exact) 708 TFLOP/s (1.12x the naive), every 2 tiles 742 (1.17x), every 4 809 (1.28x), every 8
# 837 (1.32x); relative L2 on all-positive inputs 1.9e-3, 2.6e-3, 5.7e-3, 1.4e-2 against 1.3e-1
# without promotion. 4 is the fastest interval that stays under the bf16 bound of 8e-3.
PROMOTE_EVERY = 4
SCALE_BLOCK = 128
# TMA requires 16-byte aligned base addresses and non-last strides (cuTensorMapEncodeTiled): K % 16
# for contiguous fp8 rows.
TMA_ALIGN_BYTES = 16

PER_TENSOR, PER_ROW, BLOCKWISE = 0, 1, 2


@triton.jit
def _fp8_gemm_kernel(
    a_ptr, b_ptr, c_ptr, sa_ptr, sb_ptr,
    M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    stride_sa0, stride_sa1, stride_sb0, stride_sb1,
    SCALING: tl.constexpr, SCALE_BLOCK: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    PROMOTE_EVERY: tl.constexpr, IMPRECISE_ACC: tl.constexpr,
    USE_TMA: tl.constexpr, WARP_SPECIALIZE: tl.constexpr,
):
    pid_m, pid_n = grouped_tile(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)

    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M  # [BM], wrapped: loads stay in bounds
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N  # [BN]
    if USE_TMA:
        # b is K-major, so its transpose [N, K] has contiguous rows: TMA boxes of [BN, BK].
        a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[stride_am, 1],
                                           block_shape=[BLOCK_M, BLOCK_K])
        bt_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[stride_bn, 1],
                                            block_shape=[BLOCK_N, BLOCK_K])
    else:
        offs_k = tl.arange(0, BLOCK_K)  # [BK]
        p_a = a_ptr + offs_m[:, None].to(tl.int64) * stride_am + offs_k[None, :] * stride_ak
        p_b = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :].to(tl.int64) * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    partial = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BLOCK_K), warp_specialize=WARP_SPECIALIZE):
        if USE_TMA:
            b_a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])  # [BM, BK] fp8, zero-filled past M, K
            b_b = bt_desc.load([pid_n * BLOCK_N, k * BLOCK_K]).T  # [BK, BN] fp8
        else:
            k_left = K - k * BLOCK_K
            b_a = tl.load(p_a, mask=offs_k[None, :] < k_left, other=0.0)  # [BM, BK] fp8
            b_b = tl.load(p_b, mask=offs_k[:, None] < k_left, other=0.0)  # [BK, BN] fp8
        if SCALING == 2:
            kb = (k * BLOCK_K) // SCALE_BLOCK
            b_sa = tl.load(sa_ptr + (offs_m // SCALE_BLOCK) * stride_sa0 + kb * stride_sa1)  # [BM]
            b_sb = tl.load(sb_ptr + kb * stride_sb0 + (offs_n // SCALE_BLOCK) * stride_sb1)  # [BN]
            acc += tl.dot(b_a, b_b) * (b_sa[:, None] * b_sb[None, :])
        elif PROMOTE_EVERY == 0:
            # Hopper's fp8 wgmma accumulates in reduced precision; Triton on sm_90 lets it run over
            # the whole K loop unless told otherwise. At 8192^3 with all-positive (uniform) inputs
            # that gave 3.0e-2 relative L2 error on the H200 (2026-11-30), past the bf16 bound.
            # IMPRECISE_ACC (the default: BLOCK_K) makes tl.dot add its chain into the float32
            # accumulator after that many products, as cuBLAS does unless asked for fast accumulation.
            acc = tl.dot(b_a, b_b, acc, max_num_imprecise_acc=IMPRECISE_ACC)
        else:
            # Two-level accumulation (DeepSeek-V3's promotion): the wgmma chain runs into `partial`
            # and is added exactly into `acc` every PROMOTE_EVERY tiles. The add sits under an `if`,
            # which Triton's wgmma pipeliner syncs there (wait 0) while keeping the dot asynchronous
            # in the other iterations.
            partial = tl.dot(b_a, b_b, partial, max_num_imprecise_acc=IMPRECISE_ACC)
            if k % PROMOTE_EVERY == PROMOTE_EVERY - 1:
                acc += partial
                partial = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        if not USE_TMA:
            p_a += BLOCK_K * stride_ak
            p_b += BLOCK_K * stride_bk
    if PROMOTE_EVERY > 0:
        acc += partial  # the tiles after the last in-loop promotion

    if SCALING == 0:
        acc = acc * (tl.load(sa_ptr) * tl.load(sb_ptr))
    elif SCALING == 1:
        b_sa = tl.load(sa_ptr + offs_m * stride_sa0)  # [BM]
        b_sb = tl.load(sb_ptr + offs_n * stride_sb0)  # [BN]
        acc = acc * b_sa[:, None] * b_sb[None, :]

    offs_cm = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    p_c = c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn
    tl.store(p_c, acc.to(tl.bfloat16), mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


def _check(a: torch.Tensor, b: torch.Tensor) -> tuple[int, int, int]:
    if a.dtype != torch.float8_e4m3fn or b.dtype != torch.float8_e4m3fn:
        raise TypeError(f"a and b must be float8_e4m3fn, got {a.dtype} and {b.dtype}")
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"need a [M, K] and b [K, N], got {tuple(a.shape)} and {tuple(b.shape)}")
    return a.shape[0], b.shape[1], a.shape[1]


def _check_tma(a: torch.Tensor, b: torch.Tensor) -> None:
    """Raise ``ValueError`` unless row-major ``a`` and K-major ``b`` can back TMA descriptors."""
    rows = (("a", a, a.stride(1), a.stride(0)), ("b.t()", b, b.stride(0), b.stride(1)))
    for name, t, inner, outer in rows:
        if inner != 1 or outer % TMA_ALIGN_BYTES or (t.storage_offset() * t.element_size()) % TMA_ALIGN_BYTES:
            raise ValueError(
                f"tma=True needs {name} with contiguous rows, a {TMA_ALIGN_BYTES}-byte aligned base and "
                f"row stride (K % {TMA_ALIGN_BYTES} == 0 for contiguous operands); got {name} strides "
                f"{tuple(t.stride())}: pad K or use tma=False"
            )


def _use_workspace_on(device: torch.device) -> None:
    """Let device-built TMA descriptors take their per-program workspace from torch on ``device``."""
    triton.set_allocator(lambda size, alignment, stream: torch.empty(size, dtype=torch.int8, device=device))


def _launch(
    a, b, sa, sb, scaling: int, *, block_m: int = BLOCK_M, block_n: int = BLOCK_N, block_k: int = BLOCK_K,
    group_m: int = GROUP_M, num_stages: int = NUM_STAGES, num_warps: int = NUM_WARPS,
    promote_every: int | None = None, imprecise_acc: int | None = None, tma: bool = False,
    warp_specialize: bool = False,
) -> torch.Tensor:
    """Launch the kernel. The keywords are what the public functions' ``**options`` override:

    - ``block_m``, ``block_n``, ``block_k``, ``group_m``, ``num_stages``, ``num_warps``: tiles and
      launch shape, this unit's configuration by default;
    - ``promote_every``: P >= 1 (default ``PROMOTE_EVERY``) runs the wgmma chain into a second
      accumulator and adds it exactly into the float32 one every P K tiles; 0 accumulates every
      tile into one accumulator through ``tl.dot`` (per-tensor and per-row scales only: block
      scales promote every 128 K by construction);
    - ``imprecise_acc``: ``tl.dot``'s ``max_num_imprecise_acc``, at most ``block_k``: products one
      dot may chain in the wgmma accumulator before Triton adds them into float32. ``None`` picks
      ``block_k`` when ``promote_every == 0`` (the default, exact) and 0 otherwise; 0 means no
      promotion inside the dot (Triton's sm_90 default: with ``promote_every == 0`` the whole K
      loop then accumulates imprecisely — fast, but 3.0e-2 relative L2 at 8192^3 on positive data);
    - ``tma``: load A and B tiles with TMA descriptors built on the device (row-major ``a``, K a
      multiple of 16); ``warp_specialize`` (needs ``tma``) splits the K loop into a TMA producer and
      MMA consumer warp groups, and treats ``num_warps`` as one group's size: pass ``num_warps=4``
      (see ``units/warp_specialization``).
    """
    m, n, k = _check(a, b)
    if scaling == BLOCKWISE:
        if SCALE_BLOCK % block_k:
            raise ValueError(f"block_k={block_k} must divide the {SCALE_BLOCK}-wide scale blocks")
        if promote_every is not None or imprecise_acc is not None:
            raise ValueError("block scales promote every 128 K by construction: promote_every and "
                             "imprecise_acc apply to per-tensor and per-row scales")
        promote_every = 0
    elif promote_every is None:
        promote_every = PROMOTE_EVERY
    if promote_every < 0:
        raise ValueError(f"promote_every must be >= 0, got {promote_every}")
    if imprecise_acc is None and scaling != BLOCKWISE:
        imprecise_acc = block_k if promote_every == 0 else 0
    if imprecise_acc is not None and not 0 <= imprecise_acc <= block_k:
        raise ValueError(f"imprecise_acc must lie in [0, block_k={block_k}], got {imprecise_acc}")
    if warp_specialize and not tma:
        raise ValueError("warp_specialize=True needs tma=True (the producer warps issue TMA loads)")
    if b.stride(0) != 1:
        b = b.t().contiguous().t()  # K-major for fp8 wgmma (see the module docstring)
    if tma:
        _check_tma(a, b)
        _use_workspace_on(a.device)
    c = torch.empty((m, n), dtype=torch.bfloat16, device=a.device)
    sa2 = sa if sa.dim() == 2 else sa.reshape(-1, 1)
    sb2 = sb if sb.dim() == 2 else sb.reshape(-1, 1)
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n),)
    _fp8_gemm_kernel[grid](
        a, b, c, sa2, sb2, m, n, k,
        a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        sa2.stride(0), sa2.stride(1), sb2.stride(0), sb2.stride(1),
        SCALING=scaling, SCALE_BLOCK=SCALE_BLOCK,
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=group_m,
        PROMOTE_EVERY=promote_every, IMPRECISE_ACC=imprecise_acc or None,
        USE_TMA=tma, WARP_SPECIALIZE=warp_specialize,
        num_stages=num_stages, num_warps=num_warps,
    )
    return c


def fp8_gemm_per_tensor(a_fp8: torch.Tensor, b_fp8: torch.Tensor, scale_a: torch.Tensor,
                        scale_b: torch.Tensor, **options) -> torch.Tensor:
    """``(a * scale_a) @ (b * scale_b)`` in bf16.

    Args:
        a_fp8: float8_e4m3fn ``[M, K]``, any strides.
        b_fp8: float8_e4m3fn ``[K, N]``; K-major (``stride(0) == 1``) is used as is, any other
            layout is first copied to K-major.
        scale_a, scale_b: float32 one-element tensors on the same device (read in the kernel: no
            host sync).
        **options: tile overrides for another shape (``block_m``, ``block_n``, ``block_k``,
            ``group_m``, ``num_stages``, ``num_warps``) and the accumulation and load variants
            (``promote_every``, ``imprecise_acc``, ``tma``, ``warp_specialize``); this unit's
            configuration by default. ``_launch`` documents each.

    Returns:
        bfloat16 ``[M, N]``, contiguous.

    Example::

        a = torch.randn(256, 512, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn(512, 128, device="cuda").to(torch.float8_e4m3fn)
        one = torch.ones(1, device="cuda")
        out = fp8_gemm_per_tensor(a, b, one, one)  # [256, 128] bf16
    """
    return _launch(a_fp8, b_fp8, scale_a.float().reshape(1), scale_b.float().reshape(1), PER_TENSOR, **options)


def fp8_gemm_per_row(a: torch.Tensor, b: torch.Tensor, scale_a_rows: torch.Tensor,
                     scale_b_cols: torch.Tensor, **options) -> torch.Tensor:
    """``diag(scale_a_rows) (a @ b) diag(scale_b_cols)`` in bf16 (per-token x per-channel).

    Args:
        a: float8_e4m3fn ``[M, K]``; b: float8_e4m3fn ``[K, N]``.
        scale_a_rows: float32 ``[M]``; scale_b_cols: float32 ``[N]``.
        **options: as for ``fp8_gemm_per_tensor``.

    Returns:
        bfloat16 ``[M, N]``.

    Example::

        out = fp8_gemm_per_row(a, b, torch.rand(256, device="cuda"), torch.rand(128, device="cuda"))
    """
    return _launch(a, b, scale_a_rows.float(), scale_b_cols.float(), PER_ROW, **options)


def fp8_gemm_block(a: torch.Tensor, b: torch.Tensor, scale_a: torch.Tensor,
                   scale_b: torch.Tensor, **options) -> torch.Tensor:
    """Block-scaled fp8 GEMM: every 128x128 block of ``a`` and ``b`` carries its own scale.

    ``out = sum over K-blocks kb of (a[:, kb] @ b[kb, :]) * scale_a[m // 128, kb] *
    scale_b[kb, n // 128]``, accumulated in float32.

    Args:
        a: float8_e4m3fn ``[M, K]``; b: float8_e4m3fn ``[K, N]``.
        scale_a: float32 ``[ceil(M/128), ceil(K/128)]``; scale_b: float32
            ``[ceil(K/128), ceil(N/128)]`` (any strides: ``s.t()`` of ``[ceil(N/128), ceil(K/128)]``
            weight-block scales works).
        **options: as for ``fp8_gemm_per_tensor``; ``block_k`` must divide 128, and
            ``promote_every``/``imprecise_acc`` do not apply (each 128-K step is promoted).

    Returns:
        bfloat16 ``[M, N]``.

    Example::

        sa = torch.rand(2, 4, device="cuda"); sb = torch.rand(4, 1, device="cuda")
        out = fp8_gemm_block(a, b, sa, sb)  # a [256, 512], b [512, 128]
    """
    m, n, k = _check(a, b)
    want_a = (triton.cdiv(m, SCALE_BLOCK), triton.cdiv(k, SCALE_BLOCK))
    want_b = (triton.cdiv(k, SCALE_BLOCK), triton.cdiv(n, SCALE_BLOCK))
    if tuple(scale_a.shape) != want_a or tuple(scale_b.shape) != want_b:
        raise ValueError(f"block scales must be {want_a} and {want_b}, "
                         f"got {tuple(scale_a.shape)} and {tuple(scale_b.shape)}")
    return _launch(a, b, scale_a.float(), scale_b.float(), BLOCKWISE, **options)
