"""Tile and kernel sweeps behind the tuning constants of the GEMM-family units (CUDA only).

    python -m evals.sweep_kernels splitk fp4 fp4small fp8 ws gemm > sweep.jsonl

Each group times a unit's naive and solution callables and a list of configurations at a GPU shape
with the judge's ``time_callable`` (L2 flushed, inputs refilled every iteration) and prints one JSON
line per configuration: median ms, CV, TFLOP/s and the relative L2 difference from the naive kernel
on the same inputs (``err``). ``gemm`` times cuBLAS and the four GEMM units at the task suite's GEMM
shapes. The units' tuning constants cite runs of this script
(``evals/results/kernel-sweeps-h200-2026-11-30.jsonl``).
"""

from __future__ import annotations

import dataclasses
import json
import sys

import torch

from hawkeye_env.judge.timing import time_callable
from units.harness import resolve
from units.index import get_unit

ITERS, RETRIES = 30, 1


def print_row(**fields) -> None:
    print(json.dumps(fields), flush=True)


def median_ms_and_cv(fn, inputs: list) -> tuple[float, float]:
    r = time_callable(fn, list(inputs), iters=ITERS, retries=RETRIES, seed=0, keep=0)
    return r["median_ms"], r["cv"]


def relative_error(x: torch.Tensor, y: torch.Tensor) -> float:
    x, y = x.float(), y.float()
    return float((x - y).norm() / y.norm().clamp_min(1e-12))


def _configs(fields: tuple[str, ...], rows: list[tuple], **fixed) -> list[dict]:
    return [{**dict(zip(fields, r)), **fixed} for r in rows]


def sweep(unit_name: str, shape: dict, configs: list[dict], call) -> None:
    """Time the unit's naive and solution kernels, then ``call(cfg, *inputs)`` for each config."""
    unit = get_unit(unit_name)
    inputs = resolve(unit.make_inputs)(shape, "cuda", 0)
    naive, solution = resolve(unit.naive), resolve(unit.solution)
    flops = unit.flops(**shape)
    for name, fn in (("naive", naive), ("solution", solution)):
        ms, cv = median_ms_and_cv(fn, inputs)
        print_row(unit=unit_name, shape=shape, cfg=name, ms=ms, cv=cv, tflops=flops / ms / 1e9)
    for cfg in configs:
        def fn(*args, cfg=cfg):
            return call(cfg, *args)
        try:
            err = relative_error(fn(*inputs), naive(*inputs))
            ms, cv = median_ms_and_cv(fn, inputs)
            print_row(unit=unit_name, shape=shape, cfg=cfg, ms=ms, cv=cv, tflops=flops / ms / 1e9, err=err)
        except Exception as exc:  # noqa: BLE001 - a config that does not compile is a row too
            print_row(unit=unit_name, shape=shape, cfg=cfg, error=str(exc)[:200])


TILES = ("block_m", "block_n", "block_k", "num_stages", "num_warps")


def sweep_splitk() -> None:
    from units.persistent_splitk import kernel

    tiles = [(64, 128, 64, 4, 4), (64, 64, 128, 4, 4), (64, 128, 128, 3, 4), (64, 256, 64, 3, 8)]
    configs = [c for split in (1, 4, 8, 16) for c in _configs(TILES, tiles, split_k=split)]
    sweep("persistent_splitk", {"M": 64, "N": 4096, "K": 16384}, configs, lambda c, a, b: kernel.matmul(a, b, **c))


def _sweep_fp4(shape: dict, configs: list[dict]) -> None:
    from units.mxfp4_gemm import kernel as mx
    from units.nvfp4_gemm import kernel as nv

    sweep("mxfp4_gemm", shape, configs, lambda c, *a: mx.mxfp4_gemm(*a, **c))
    sweep("nvfp4_gemm", shape, configs, lambda c, *a: nv.nvfp4_gemm(*a, **c))


def sweep_fp4() -> None:
    tiles = [(128, 128, 128, 3, 8), (256, 64, 128, 3, 8), (128, 64, 128, 3, 4), (64, 128, 128, 3, 4),
             (128, 128, 64, 4, 8), (256, 128, 64, 3, 8), (128, 256, 64, 3, 8), (64, 64, 256, 3, 4)]
    _sweep_fp4({"M": 256, "N": 8192, "K": 8192}, _configs(TILES, tiles))


def sweep_fp4_small() -> None:
    tiles = [(32, 64, 128, 4, 4), (32, 128, 128, 3, 4), (16, 64, 256, 3, 4), (32, 32, 256, 4, 4),
             (64, 64, 128, 3, 4), (32, 64, 256, 3, 4)]
    _sweep_fp4({"M": 32, "N": 8192, "K": 8192}, _configs(TILES, tiles, group_m=1))


def sweep_fp8() -> None:
    from units.fp8_scaled_gemm import kernel

    tiles = [(128, 256, 128, 3, 8), (128, 128, 128, 4, 8), (128, 256, 64, 4, 8), (128, 128, 128, 3, 4)]
    sweep("fp8_scaled_gemm", {"M": 8192, "N": 8192, "K": 8192}, _configs(TILES, tiles),
          lambda c, *a: kernel.fp8_gemm_per_tensor(*a, **c))


def sweep_warp_specialization() -> None:
    from units.warp_specialization import kernel

    configs = [dataclasses.asdict(c) for c in kernel.CANDIDATES.values()]
    sweep("warp_specialization", {"M": 4096, "N": 4096, "K": 4096}, configs,
          lambda c, a, b: kernel.launch(a, b, kernel.GemmConfig(**c)))


def sweep_gemm() -> None:
    from units.grouped_tile_order.kernel import matmul as grouped
    from units.tma_descriptors.kernel import matmul as tma
    from units.warp_specialization.kernel import matmul as ws

    kernels = {"cublas": torch.matmul, "grouped_128x256x64": grouped, "tma": tma, "ws": ws}
    shapes = [(4096, 4096, 4096), (8192, 8192, 8192), (16384, 1024, 8192), (8192, 4096, 14336), (1024, 28672, 4096)]
    for m, n, k in shapes:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        shape = {"M": m, "N": n, "K": k}
        for name, fn in kernels.items():
            try:
                ms, cv = median_ms_and_cv(fn, [a, b])
                print_row(unit="gemm", shape=shape, cfg=name, ms=ms, cv=cv, tflops=2 * m * n * k / ms / 1e9)
            except Exception as exc:  # noqa: BLE001
                print_row(unit="gemm", shape=shape, cfg=name, error=str(exc)[:200])


GROUPS = {"splitk": sweep_splitk, "fp4": sweep_fp4, "fp4small": sweep_fp4_small, "fp8": sweep_fp8,
          "ws": sweep_warp_specialization, "gemm": sweep_gemm}


def main(argv: list[str]) -> int:
    unknown = [g for g in argv if g not in GROUPS]
    if unknown or not argv:
        print(f"usage: python -m evals.sweep_kernels {' '.join(GROUPS)}", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("the sweeps time kernels on a CUDA GPU; none is visible", file=sys.stderr)
        return 2
    for group in argv:
        GROUPS[group]()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
