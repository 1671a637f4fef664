"""Warp-specialized persistent FP8 e4m3 GEMM in Gluon (Hopper), per-tensor scales in the epilogue.

``out = (a * scale_a) @ (b * scale_b)`` for float8_e4m3fn ``a [M, K]`` and ``b [K, N]`` with float32
scalar scales, bf16 output. The kernel is ``units.ws_persistent_gemm``'s (one TMA producer warp, two
wgmma consumer warpgroups, an mbarrier ring, a persistent tile loop) with two changes:

- fp8 wgmma reads both operands K-major from shared memory, so B travels as its ``[N, K]``
  transpose in ``[BLOCK_N, BLOCK_K]`` TMA boxes and the consumers hand wgmma a permuted view
  (``B_K_MAJOR``). A row-major ``b`` is copied to K-major first (one pass over ``K * N`` bytes);
  pass ``w.t()`` of a contiguous ``[N, K]`` weight to skip it.
- a per-tensor scale is constant over the K sum, so it factors out: each consumer multiplies its
  float32 accumulator by ``scale_a * scale_b`` once per tile, before the bf16 conversion (``SCALED``).

Accumulation: Hopper's fp8 wgmma adds products into its accumulator at reduced precision, which
over a whole K loop (Gluon's sm_90 default, ``max_num_imprecise_acc = 2**30``, like
``torch._scaled_mm(use_fast_accum=True)``) gave 3.0e-2 relative L2 at 8192^3 on positive data in
``units.fp8_scaled_gemm``'s sweep, past bf16's 8e-3. The solution therefore promotes: the wgmma
chain restarts every 4 K steps (``promote_every``, that unit's measured choice) and its partial sum
is added into a float32 accumulator on the CUDA cores. The two accumulators fit the consumers'
registers at 64 x 128 per warpgroup, so the solution's tile is 128x128x128; the 128x256x128
configurations accumulate in the tensor core only. Per-tensor scales only; row and block scales are
``units.fp8_scaled_gemm``'s.

K must be a multiple of 16 and N of 16 (16-byte rows of fp8 for TMA); any M. Example::

    from units.fp8_scaled_gemm.meta import make_inputs
    a, b, sa, sb = make_inputs({"M": 8192, "N": 8192, "K": 8192}, "cuda", 0)
    out = fp8_gemm_per_tensor(a, b, sa, sb)        # [8192, 8192] bf16
"""

from __future__ import annotations

import torch

from units.ws_persistent_gemm.kernel import COOPERATIVE, PINGPONG, WsGemmConfig, launch

# Tiles: BLOCK_K = 128 (a 128-byte row of fp8 fills the 128-byte swizzle; the fp8 wgmma's K is 32
# an instruction). 32 KiB a stage at 128x128x128, 48 KiB at 128x256x128. Promotion every 4 K steps:
# units/fp8_scaled_gemm's H200 sweep of 2026-11-30 (every 4 tiles: 1.9e-3 .. 5.7e-3 relative L2 on
# positive data, the fastest interval under 8e-3). Not yet timed in Gluon.
PROMOTE_EVERY = 4
SOLUTION = WsGemmConfig(COOPERATIVE, block_m=128, block_n=128, block_k=128, num_stages=6, promote_every=PROMOTE_EVERY)
CONFIGS: dict[str, WsGemmConfig] = {c.name: c for c in (
    SOLUTION,
    WsGemmConfig(COOPERATIVE, block_m=128, block_n=128, block_k=128, num_stages=5, promote_every=PROMOTE_EVERY),
    WsGemmConfig(COOPERATIVE, block_m=128, block_n=256, block_k=128, num_stages=4),
    WsGemmConfig(COOPERATIVE, block_m=128, block_n=128, block_k=128, num_stages=6),
    WsGemmConfig(PINGPONG, block_m=128, block_n=128, block_k=128, num_stages=6),
)}


def k_major(b: torch.Tensor) -> torch.Tensor:
    """``b [K, N]`` as a contiguous ``[N, K]`` tensor (a view when ``b`` already is K-major)."""
    bt = b.t()
    return bt if bt.is_contiguous() else bt.contiguous()


def fp8_gemm_per_tensor(a_fp8: torch.Tensor, b_fp8: torch.Tensor, scale_a: torch.Tensor, scale_b: torch.Tensor,
                        config: WsGemmConfig | None = None) -> torch.Tensor:
    """``(a * scale_a) @ (b * scale_b) -> [M, N] bf16`` for float8_e4m3fn ``a [M, K]``, ``b [K, N]``.

    ``scale_a`` and ``scale_b`` are one-element float32 tensors; ``config`` defaults to
    ``SOLUTION`` (cooperative 128x128x128, 6 stages, promoted every 4 K steps); see ``CONFIGS``.
    """
    if a_fp8.ndim != 2 or b_fp8.ndim != 2 or a_fp8.shape[1] != b_fp8.shape[0]:
        raise ValueError(f"expected a [M, K] and b [K, N], got {tuple(a_fp8.shape)} and {tuple(b_fp8.shape)}")
    if a_fp8.dtype != torch.float8_e4m3fn or b_fp8.dtype != torch.float8_e4m3fn:
        raise TypeError(f"expected float8_e4m3fn inputs, got {a_fp8.dtype} and {b_fp8.dtype}")
    if scale_a.numel() != 1 or scale_b.numel() != 1:
        raise ValueError("per-tensor scales are one-element tensors")
    if a_fp8.device.type != "cuda":
        raise RuntimeError("the Gluon kernel needs a Hopper GPU (no interpreter); on CPU use units.ws_fp8_gemm.naive")
    scales = (scale_a.float().contiguous(), scale_b.float().contiguous())
    return launch(a_fp8, k_major(b_fp8), torch.bfloat16, config or SOLUTION, b_k_major=True, scales=scales)
