"""H200 sweep of the simple-GLA chunked scans (``units/chunked_scan/kernel.py``). CUDA only.

    python -m bench.kerneldev.sweeps.chunked_scan [--budget-s 150] [--only long] [--rounds 3]

Run from the repository root. At the two simple-GLA task shapes, ``long`` (simple_gla_long_bf16,
B1 H16 T32768 D128) and ``short`` (simple_gla_fwd_bf16, B8 H16 T2048 D128), it times FLA's
``chunk_simple_gla`` (when the ``fla`` extra is installed; its absence is an ``unavailable`` row),
the task's expert scan, the single-pass walk (``chunk_simple_gla``) and CONFIGS: the segmented
walks (``units/chunked_scan/segmented.py``: segments, the walks' V-block, warps and stages), then the
two-pass ``chunk_simple_gla_parallel`` (state tile, warps, stages, segments of the state walk); the H200
figures are BENCHMARKS.md's Chunked scan tables. The gate's log-decay is computed once outside the
timed calls (every runner gets the same ``g``).

Each configuration is checked once against the walk in float32 (relative L2 under 1e-2) and
dropped if it fails to compile, run or match; then every runner is timed ``--rounds`` times
interleaved (``bench.kerneldev.sweeps.harness.check_then_time``). Rows as there, with ``tbps``: q, k, v, o and g
bytes over the median, and ``vs_fla`` (or ``vs_walk`` without FLA).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from bench.kerneldev.sweeps.harness import check_then_time, sweep_main
from units.chunked_scan import kernel, segmented

# (label, B, H, T, D, expert): the two simple-GLA task shapes and the scan each expert calls.
SHAPES = (
    ("long", 1, 16, 32768, 128, "parallel"),
    ("short", 8, 16, 2048, 128, "walk"),
)
KNOBS = ("block_k", "block_v", "num_warps", "num_stages", "segments")
# The fastest one-segment tile (64x64, 4 warps, 3 stages) with the state walk in 1 to 32 segments,
# then tile, warp and stage changes at 8 segments.
# Compiled for sm_90 with Triton 3.6 on a host without a GPU at the long shape with 8 segments:
# state kernel 141 registers, 49 KiB shared memory, wgmma m64n64k16; output kernel 114 registers,
# 56 KiB; carry kernel 56 registers; no spills.
# First the segmented walks (units/chunked_scan/segmented.py: the run ends, the carries, then one
# walk per run; no per-chunk state in DRAM), by segment count, then the walk's stages, warps and
# V-block; then the two-pass scan.
SEGMENTED_KNOBS = ("segments", "walk_block_v", "walk_warps", "walk_stages")
SEGMENTED = tuple({"form": "segmented", **dict(zip(SEGMENTED_KNOBS, row))} for row in (
    (16, 64, 4, 2),
    (8, 64, 4, 2),
    (32, 64, 4, 2),
    (64, 64, 4, 2),
    (16, 64, 4, 3),
    (16, 64, 8, 2),
    (16, 32, 4, 2),
    (32, 32, 4, 2),
))
CONFIGS = SEGMENTED + tuple(dict(zip(KNOBS, row)) for row in (
    (64, 64, 4, 3, 1),
    (64, 64, 4, 3, 2),
    (64, 64, 4, 3, 4),
    (64, 64, 4, 3, 8),
    (64, 64, 4, 3, 16),
    (64, 64, 4, 3, 32),
    (64, 64, 4, 2, 8),
    (32, 64, 4, 3, 8),
    (64, 32, 4, 3, 8),
    (64, 64, 8, 3, 8),
))
MAX_ERR = 1e-2
BUDGET_S = 150.0
GATE_BIAS = 4.0  # the tasks' logsigmoid offset


def call(cfg: dict, q, k, v, g) -> torch.Tensor:
    """The scan of configuration ``cfg``: keywords of ``chunk_simple_gla_segmented`` when its
    ``form`` is "segmented", else of ``chunk_simple_gla_parallel``."""
    if cfg.get("form") == "segmented":
        return segmented.chunk_simple_gla_segmented(q, k, v, g, **{k_: x for k_, x in cfg.items() if k_ != "form"})
    return kernel.chunk_simple_gla_parallel(q, k, v, g, **cfg)


def fixed_runners(expert: str, device: str) -> tuple[dict, str]:
    """``({name: fn(q, k, v, g)}, reference name)``: FLA when installed, the expert's scan, the walk."""
    runners, reference = {}, "walk"
    try:
        from hawkeye_env.tasks.shared.fla_baselines import fla_kernel, from_heads_as_batch, heads_as_batch

        fla_scan = fla_kernel("simple_gla", "chunk_simple_gla", torch.device(device))

        def fla(q, k, v, g):
            o, _ = fla_scan(heads_as_batch(q), heads_as_batch(k), heads_as_batch(v), g=heads_as_batch(g),
                            scale=1.0, output_final_state=False)
            return from_heads_as_batch(o, q.shape[0], q.shape[1])

        runners["fla"], reference = fla, "fla"
    except Exception as exc:  # noqa: BLE001 - FLA missing or unable to run: reported, not hidden
        from bench.kerneldev.sweeps.harness import print_row

        print_row(kind="unavailable", cfg="fla", why=f"{type(exc).__name__}: {exc}"[:300])
    runners["expert"] = kernel.chunk_simple_gla_parallel if expert == "parallel" else kernel.chunk_simple_gla
    runners["walk"] = kernel.chunk_simple_gla
    return runners, reference


def inputs(b: int, h: int, t: int, d: int, device: str) -> list[torch.Tensor]:
    """q (scaled by ``D^-0.5``), k, v bf16 ``[B, H, T, D]`` and the log-decay g float32 ``[B, H, T]``."""
    gen = torch.Generator(device=device).manual_seed(0)
    q, k, v = (torch.randn(b, h, t, d, device=device, generator=gen).to(torch.bfloat16) for _ in range(3))
    gate = torch.randn(b, h, t, device=device, generator=gen)
    return [(q.float() * d**-0.5).to(torch.bfloat16), k, v, F.logsigmoid(gate + GATE_BIAS)]


def sweep_shape(label: str, b: int, h: int, t: int, d: int, expert: str, rounds: int, deadline: float) -> None:
    xs = inputs(b, h, t, d, "cuda")
    expected = kernel.chunk_simple_gla(*xs).float()
    fixed, reference = fixed_runners(expert, "cuda")
    tb = (4 * b * h * t * d * 2 + b * h * t * 4) / 1e12
    check_then_time(label, xs, expected, fixed, CONFIGS, call, rounds=rounds, deadline=deadline, max_err=MAX_ERR,
                    rate=lambda ms: {"tbps": tb / ms * 1e3}, reference=reference)


def main(argv: list[str] | None = None) -> int:
    return sweep_main(argv, __doc__, "chunked-scan", CONFIGS, SHAPES, sweep_shape, BUDGET_S)


if __name__ == "__main__":
    raise SystemExit(main())
