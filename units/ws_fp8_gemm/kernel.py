"""Warp-specialized persistent FP8 e4m3 GEMM in Gluon (Hopper), per-tensor or per-row scales in the epilogue.

``out = (a * scale_a) @ (b * scale_b)`` for float8_e4m3fn ``a [M, K]`` and ``b [K, N]`` with float32
scalar scales (``fp8_gemm_per_tensor``) or ``scale_a [M]`` per row of ``a`` and ``scale_b [N]`` per
column of ``b`` (``fp8_gemm_per_row``: per token and per output channel), bf16 output. The kernel
is ``units.ws_persistent_gemm``'s (one TMA producer warp, two wgmma consumer warpgroups, an
mbarrier ring, a persistent tile loop) with two changes:

- fp8 wgmma reads both operands K-major from shared memory, so B travels as its ``[N, K]``
  transpose in ``[BLOCK_N, BLOCK_K]`` TMA boxes and the consumers hand wgmma a permuted view
  (``B_K_MAJOR``). A row-major ``b`` is copied to K-major first (one pass over ``K * N`` bytes);
  pass ``w.t()`` of a contiguous ``[N, K]`` weight to skip it.
- a per-tensor scale is constant over the K sum, so it factors out: each consumer multiplies its
  float32 accumulator by ``scale_a * scale_b`` once per tile, before the bf16 conversion (``SCALED``);
  per-row scales factor out the same way, ``scale_a`` of the consumer's rows and ``scale_b`` of the
  tile's columns loaded into the accumulator layout's row and column slices.

Accumulation: Hopper's fp8 wgmma adds products into its accumulator at reduced precision, which
over a whole K loop (Gluon's sm_90 default, ``max_num_imprecise_acc = 2**30``, like
``torch._scaled_mm(use_fast_accum=True)``) gave 3.0e-2 relative L2 at 8192^3 on positive data in
``units.fp8_scaled_gemm``'s sweep, past bf16's 8e-3. The solution therefore promotes: the wgmma
chain restarts every 4 K steps (``promote_every``, that unit's measured choice) and its partial sum
is added into a float32 accumulator on the CUDA cores. The two accumulators fit the consumers'
registers at 64 x 128 per warpgroup, so the solution's tile is 128x128x128; the 128x256x128
configurations accumulate in the tensor core only. Block scales (one per 128-wide K block) change
inside the K sum and are ``units.fp8_scaled_gemm``'s.

K must be a multiple of 16 and N of 16 (16-byte rows of fp8 for TMA); any M. Example::

    from units.fp8_scaled_gemm.meta import make_inputs
    a, b, sa, sb = make_inputs({"M": 8192, "N": 8192, "K": 8192}, "cuda", 0)
    out = fp8_gemm_per_tensor(a, b, sa, sb)        # [8192, 8192] bf16
"""

from __future__ import annotations

import torch

from units.fp8_scaled_gemm import kernel as triton_fp8
from units.gluon_compat import on_hopper
from units.ws_persistent_gemm.kernel import (
    COOPERATIVE,
    ROW_SCALES,
    TENSOR_SCALES,
    WsGemmConfig,
    check_operands,
    launch,
)
from units.ws_persistent_gemm.kernel import fits_tma as ws_fits_tma

# Tiles: BLOCK_K = 128 (a 128-byte row of fp8 fills the 128-byte swizzle; the fp8 wgmma's K is 32
# an instruction). 32 KiB a stage at 128x128x128, 48 KiB at 128x256x128. Promotion every 4 K steps:
# units/fp8_scaled_gemm's H200 sweep of 2026-11-30 (every 4 tiles: 1.9e-3 .. 5.7e-3 relative L2 on
# positive data, the fastest interval under 8e-3). In Gluon on the FP8 tasks' inputs (H200, 2026-12-03,
# bench/results/sweep-ws-fp8/ws-fp8-sweep-h200-2026-12-03.jsonl): every 4 and every 8 K steps within 0.2% of each
# other, every 2 K steps 7% slower; 6 stages faster than 5 (5%) and 4 (14%).
PROMOTE_EVERY = 4
SOLUTION = WsGemmConfig(COOPERATIVE, block_m=128, block_n=128, block_k=128, num_stages=6, promote_every=PROMOTE_EVERY)
CONFIGS: dict[str, WsGemmConfig] = {c.name: c for c in (
    SOLUTION,
    WsGemmConfig(COOPERATIVE, block_m=128, block_n=128, block_k=128, num_stages=5, promote_every=PROMOTE_EVERY),
    WsGemmConfig(COOPERATIVE, block_m=128, block_n=256, block_k=128, num_stages=4),
    WsGemmConfig(COOPERATIVE, block_m=128, block_n=128, block_k=128, num_stages=6),
)}
# Not offered: ping-pong 128x128x128, 6 stages, compiles (229,624 B of shared memory) but its launch
# at 8192^3 failed with "unspecified launch failure" on the H200 (2026-12-03,
# bench/results/sweep-ws-fp8/ws-fp8-sweep-pingpong-h200-2026-12-03.jsonl).


def k_major(b: torch.Tensor) -> torch.Tensor:
    """``b [K, N]`` as a contiguous ``[N, K]`` tensor (a view when ``b`` already is K-major)."""
    bt = b.t()
    return bt if bt.is_contiguous() else bt.contiguous()


def fits_tma(a_fp8: torch.Tensor, b_fp8: torch.Tensor) -> bool:
    """True when ``a [M, K]``, ``b [K, N]`` and the bf16 output can back TMA descriptors: 16-byte
    rows (``K % 16 == 0`` for fp8, ``N % 8 == 0`` for the output) and aligned bases; a ``b`` that
    is not K-major is copied to K-major first. Callers with other shapes use the Triton-language
    kernel (``units.fp8_scaled_gemm``), which masks."""
    return ws_fits_tma(a_fp8, b_fp8, copies_b=True)


def _check(a_fp8: torch.Tensor, b_fp8: torch.Tensor) -> None:
    check_operands(a_fp8, b_fp8, torch.float8_e4m3fn, "units.ws_fp8_gemm.naive")


def fp8_gemm_per_tensor(a_fp8: torch.Tensor, b_fp8: torch.Tensor, scale_a: torch.Tensor, scale_b: torch.Tensor,
                        config: WsGemmConfig | None = None) -> torch.Tensor:
    """``(a * scale_a) @ (b * scale_b) -> [M, N] bf16`` for float8_e4m3fn ``a [M, K]``, ``b [K, N]``.

    ``scale_a`` and ``scale_b`` are one-element float32 tensors; ``config`` defaults to
    ``SOLUTION`` (cooperative 128x128x128, 6 stages, promoted every 4 K steps); see ``CONFIGS``.
    """
    _check(a_fp8, b_fp8)
    if scale_a.numel() != 1 or scale_b.numel() != 1:
        raise ValueError("per-tensor scales are one-element tensors")
    scales = (scale_a.float().contiguous(), scale_b.float().contiguous())
    return launch(a_fp8, k_major(b_fp8), torch.bfloat16, config or SOLUTION, b_k_major=True, scales=scales,
                  scale_mode=TENSOR_SCALES)


def fp8_gemm_per_row(a_fp8: torch.Tensor, b_fp8: torch.Tensor, scale_a: torch.Tensor, scale_b: torch.Tensor,
                     config: WsGemmConfig | None = None) -> torch.Tensor:
    """``out[m, n] = scale_a[m] * scale_b[n] * sum_k a[m, k] b[k, n] -> [M, N] bf16`` for float8_e4m3fn
    ``a [M, K]``, ``b [K, N]`` and float32 ``scale_a`` with ``M`` elements, ``scale_b`` with ``N``
    (``[M]``, ``[M, 1]``, ``[N]`` or ``[1, N]``); ``config`` as ``fp8_gemm_per_tensor``'s."""
    _check(a_fp8, b_fp8)
    m, n = a_fp8.shape[0], b_fp8.shape[1]
    if scale_a.numel() != m or scale_b.numel() != n:
        raise ValueError(f"per-row scales need {m} and {n} elements, got {scale_a.numel()} and {scale_b.numel()}")
    scales = (scale_a.float().reshape(m).contiguous(), scale_b.float().reshape(n).contiguous())
    return launch(a_fp8, k_major(b_fp8), torch.bfloat16, config or SOLUTION, b_k_major=True, scales=scales,
                  scale_mode=ROW_SCALES)


def per_tensor_or_twin(a_fp8: torch.Tensor, b_fp8: torch.Tensor, scale_a: torch.Tensor,
                       scale_b: torch.Tensor) -> torch.Tensor:
    """``fp8_gemm_per_tensor`` on a Hopper GPU when TMA can describe the operands (``fits_tma``),
    else ``units.fp8_scaled_gemm``'s Triton-language kernel (the CPU interpreter, odd row lengths):
    the FP8 experts' call, one import that ``policies.inline`` can inline with this unit's knobs."""
    if on_hopper(a_fp8) and fits_tma(a_fp8, b_fp8):
        return fp8_gemm_per_tensor(a_fp8, b_fp8, scale_a, scale_b)
    return triton_fp8.fp8_gemm_per_tensor(a_fp8, b_fp8, scale_a, scale_b)


def per_row_or_twin(a_fp8: torch.Tensor, b_fp8: torch.Tensor, scale_a: torch.Tensor,
                    scale_b: torch.Tensor) -> torch.Tensor:
    """``fp8_gemm_per_row`` where it can run, else ``units.fp8_scaled_gemm``'s per-row Triton
    kernel, as ``per_tensor_or_twin``."""
    if on_hopper(a_fp8) and fits_tma(a_fp8, b_fp8):
        return fp8_gemm_per_row(a_fp8, b_fp8, scale_a, scale_b)
    return triton_fp8.fp8_gemm_per_row(a_fp8, b_fp8, scale_a, scale_b)
