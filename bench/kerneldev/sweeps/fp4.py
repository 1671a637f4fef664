"""H200 sweep of the mxfp4_gemm / nvfp4_gemm kernel variants against decode-then-GEMM and cuBLAS.

    python -m bench.kerneldev.sweeps.fp4 [--budget-s 140] [--jobs 8] [--only mxfp4_gemm] [--m 32]

(cwd = repo root, repo on PYTHONPATH). At M=32 and M=256, N=K=8192, for each unit it times the naive
kernel (decode to a bf16 weight in DRAM, then the house bf16 GEMM), the solution as configured
(``tiles_for(M)``), ``torch.matmul`` on a bf16 weight of the same shape (cuBLAS: the bound the
FP4 kernels should beat at small M, where they read 4x fewer weight bytes), then each variant
configuration, with the judge's ``time_callable`` (L2 flushed, inputs refilled every iteration,
30 iterations, one retry over CV 0.05). One JSON line per run: ``ms``, ``cv``, ``gbps`` (packed
weight bytes ``K*N/2`` over the median: the effective rate at which the 4-bit weight streams; cuBLAS
rows use the same numerator so rows compare as 1/time), ``tflops``, ``err`` (relative L2 distance
from the naive kernel's output on the same inputs; bf16 rounding gives ~3e-3), and ``regs`` /
``spills`` of the variant's GEMM kernel. A configuration that fails to compile or run is an
``error`` row. Configurations are compiled first in ``--jobs`` worker processes (Triton's disk
cache), then timed one by one; once ``--budget-s`` seconds have passed the rest are ``skipped``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context

import torch

from bench.kerneldev.sweeps.harness import median_ms_and_cv, print_row, relative_error
from bench.provenance import provenance
from units.mxfp4_gemm.kernel import BASE_VARIANT  # nvfp4_gemm's is the same

SHAPES = ({"M": 32, "N": 8192, "K": 8192}, {"M": 256, "N": 8192, "K": 8192})
UNITS = ("mxfp4_gemm", "nvfp4_gemm")
REQUIRED_MARGIN = 1.5  # both units' Metric.min_margin (meta.py): solution over naive
MAX_ERR = 1e-2  # relative L2 from the naive output; bf16 rounding of the two kernels gives ~3e-3
TILES = ("block_m", "block_n", "block_k", "num_stages", "num_warps")


# Every row names every keyword: the variant keywords start from the units' base design (select
# decode, interleaved join, no swap, no split, one scale load per group: BASE_VARIANT), not from
# tiles_for(M).


def _cfg(tiles: tuple, **variant) -> dict:
    return {**dict(zip(TILES, tiles)), "group_m": 1 if tiles[0] <= 64 else 8, **BASE_VARIANT, **variant}


# Variant configurations, most informative first (a run out of budget drops the tail). M=32: the
# weight stream dominates; "lut" decodes four packed bytes per PTX block (units/fp4_ptx.py),
# swap_ab makes the decoded weight the MMA's register operand and M=32 the MMA's N (no padding to
# 64 rows), two_dot drops the interleave shuffle, split_k fills the 132 SMs (N/BLOCK_N programs
# alone are 64-128). M=256: larger swap_ab tiles decode each weight tile once.
LUT = {"decode": "lut", "unpack": "two_dot", "expand_scales": True}
SMALL = [
    _cfg((32, 128, 128, 3, 4), **LUT, split_k=4),
    _cfg((32, 128, 128, 4, 4), **LUT, split_k=4),
    _cfg((32, 128, 64, 4, 4), **LUT, split_k=4),
    _cfg((32, 64, 128, 3, 4), **LUT, split_k=4),
    _cfg((32, 128, 128, 3, 4), **LUT, split_k=8),
    _cfg((32, 128, 128, 3, 8), **LUT, split_k=4),
    _cfg((32, 256, 64, 3, 8), **LUT, split_k=4),
    _cfg((32, 64, 128, 4, 4), **LUT, split_k=8),
    _cfg((16, 128, 128, 3, 4), **LUT, split_k=4),
    _cfg((32, 256, 128, 2, 8), **LUT, split_k=2),
    _cfg((32, 128, 128, 3, 4), **LUT, split_k=3),
    _cfg((64, 128, 128, 3, 4), **LUT, split_k=4),
    _cfg((64, 128, 64, 4, 4), **LUT, split_k=4),
    _cfg((64, 64, 128, 3, 4), **LUT, split_k=4),
    _cfg((64, 128, 128, 3, 4), **LUT, split_k=8),
    _cfg((64, 128, 128, 3, 4), **LUT, split_k=2),
    _cfg((64, 64, 64, 4, 4), **LUT, split_k=4),
    _cfg((64, 64, 128, 3, 4), **LUT, split_k=8),
    _cfg((64, 128, 64, 4, 4), **LUT, split_k=8),
    _cfg((64, 128, 128, 4, 4), **LUT, split_k=4),
    _cfg((64, 64, 256, 3, 4), **LUT, split_k=4),
    _cfg((64, 128, 256, 2, 4), **LUT, split_k=2),
    _cfg((32, 64, 256, 3, 4), swap_ab=True, unpack="two_dot", decode="bits", split_k=2),
    _cfg((32, 64, 256, 3, 4), swap_ab=True, unpack="two_dot", decode="bits", split_k=4),
    _cfg((32, 64, 256, 3, 4), swap_ab=True, unpack="two_dot", decode="bits"),
    _cfg((32, 128, 128, 4, 4), swap_ab=True, unpack="two_dot", decode="bits", split_k=2, expand_scales=True),
    _cfg((32, 128, 128, 4, 8), swap_ab=True, unpack="two_dot", decode="bits", split_k=4, expand_scales=True),
    _cfg((32, 64, 128, 4, 4), swap_ab=True, unpack="two_dot", decode="bits", split_k=4, expand_scales=True),
    _cfg((32, 64, 256, 3, 4), swap_ab=True, unpack="two_dot", decode="select", split_k=2),
    _cfg((32, 64, 256, 3, 4), swap_ab=True, unpack="join", decode="bits", split_k=2),
    _cfg((32, 64, 256, 3, 4), swap_ab=True, decode="dot_scaled", split_k=2),
    _cfg((32, 128, 128, 4, 4), swap_ab=True, decode="dot_scaled", split_k=4),
    _cfg((64, 64, 128, 3, 4), decode="bits"),
    _cfg((64, 64, 128, 3, 4), unpack="two_dot", decode="bits", expand_scales=True),
    _cfg((64, 64, 128, 3, 4), decode="bits", expand_scales=True, split_k=4),
    _cfg((32, 64, 256, 4, 4), swap_ab=True, unpack="two_dot", decode="bits", split_k=2),
    _cfg((32, 64, 256, 3, 4), swap_ab=True, unpack="two_dot", decode="bits", split_k=8),
    _cfg((32, 128, 256, 3, 8), swap_ab=True, unpack="two_dot", decode="bits", split_k=2),
    _cfg((32, 256, 64, 4, 8), swap_ab=True, unpack="two_dot", decode="bits", split_k=2, expand_scales=True),
    _cfg((32, 64, 256, 3, 4), swap_ab=True, decode="dot_scaled", split_k=4),
]
LARGE = [
    _cfg((256, 128, 64, 3, 8), swap_ab=True, unpack="two_dot", decode="bits", split_k=2, expand_scales=True),
    _cfg((128, 128, 64, 4, 8), swap_ab=True, unpack="two_dot", decode="bits", expand_scales=True),
    _cfg((256, 128, 64, 3, 8), swap_ab=True, unpack="two_dot", decode="bits", split_k=2),
    _cfg((256, 128, 64, 4, 8), swap_ab=True, unpack="two_dot", decode="bits", split_k=2, expand_scales=True),
    _cfg((128, 64, 128, 3, 4), swap_ab=True, unpack="two_dot", decode="bits", expand_scales=True),
    _cfg((256, 128, 64, 3, 8), swap_ab=True, unpack="two_dot", decode="select", split_k=2, expand_scales=True),
    _cfg((256, 128, 64, 3, 8), swap_ab=True, decode="dot_scaled", split_k=2),
    _cfg((128, 128, 128, 3, 8), swap_ab=True, decode="dot_scaled"),
    _cfg((256, 64, 128, 3, 8), expand_scales=True),
    _cfg((256, 64, 128, 3, 8), decode="bits", expand_scales=True),
    _cfg((128, 128, 64, 3, 8), unpack="two_dot", decode="bits", expand_scales=True),
    _cfg((256, 128, 64, 3, 8), swap_ab=True, unpack="two_dot", decode="bits", split_k=4, expand_scales=True),
    _cfg((128, 128, 64, 3, 8), swap_ab=True, unpack="two_dot", decode="bits", split_k=2, expand_scales=True),
]


def _configs(unit: str, shape: dict) -> list[dict]:
    configs = SMALL if shape["M"] <= 64 else LARGE
    if unit == "nvfp4_gemm":  # dot_scaled takes e8m0 scales only
        configs = [c for c in configs if c.get("decode") != "dot_scaled"]
    return configs


def _kernel(unit: str):
    """The unit's wrapper and the JIT kernel both units launch (``units/block_scaled_fp4.py``)."""
    from units.block_scaled_fp4 import _fp4_gemm_kernel

    if unit == "mxfp4_gemm":
        from units.mxfp4_gemm.kernel import mxfp4_gemm

        return mxfp4_gemm, _fp4_gemm_kernel
    from units.nvfp4_gemm.kernel import nvfp4_gemm

    return nvfp4_gemm, _fp4_gemm_kernel


def _inputs(unit: str, shape: dict, device: str = "cuda") -> tuple[list, torch.Tensor]:
    """The unit's inputs (its encoder, run on the GPU: seconds instead of minutes on the host) and
    the bf16 weight they encode, for cuBLAS."""
    g = torch.Generator(device=device).manual_seed(0)
    a = torch.randn(shape["M"], shape["K"], generator=g, device=device).to(torch.bfloat16)
    w = torch.randn(shape["K"], shape["N"], generator=g, device=device).to(torch.bfloat16)
    if unit == "mxfp4_gemm":
        from units.mxfp4_gemm.reference import quantize_mxfp4

        return [a, *quantize_mxfp4(w)], w
    from units.nvfp4_gemm.reference import quantize_nvfp4

    return [a, *quantize_nvfp4(w)], w


def _zero_inputs(unit: str, shape: dict) -> list:
    """Inputs with the real shapes, dtypes and strides (what Triton specializes on); values unused."""
    m, n, k = shape["M"], shape["N"], shape["K"]
    a = torch.zeros(m, k, dtype=torch.bfloat16, device="cuda")
    packed = torch.zeros(k // 2, n, dtype=torch.uint8, device="cuda")
    if unit == "mxfp4_gemm":
        return [a, packed, torch.full((k // 32, n), 127, dtype=torch.uint8, device="cuda")]
    scales = torch.ones(k // 16, n, device="cuda").to(torch.float8_e4m3fn)
    return [a, packed, scales, torch.ones(1, device="cuda")]


def _compile_one(unit: str, shape: dict, cfg: dict) -> str:
    """Worker: one call of the configuration fills Triton's disk cache for the timing process."""
    fn, _ = _kernel(unit)
    try:
        fn(*_zero_inputs(unit, shape), **cfg)
        torch.cuda.synchronize()
        return "ok"
    except Exception as exc:  # noqa: BLE001 - the timing process reports it as an error row
        return f"{type(exc).__name__}: {str(exc)[:120]}"


def _precompile(jobs: list[tuple[str, dict, dict]], workers: int) -> None:
    """Compile every configuration in worker processes; a failure here only costs the time saved."""
    if workers <= 0 or not jobs:
        return
    t0 = time.perf_counter()
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
            futures = [pool.submit(_compile_one, *job) for job in jobs]
            failed = sum(f.result() != "ok" for f in as_completed(futures))
        print_row(unit="-", cfg="precompile", configs=len(jobs), failed=failed, workers=workers,
             s=round(time.perf_counter() - t0, 1))
    except Exception as exc:  # noqa: BLE001 - the timing loop compiles whatever is missing
        print_row(unit="-", cfg="precompile", error=f"{type(exc).__name__}: {str(exc)[:200]}",
             s=round(time.perf_counter() - t0, 1))


def _kernel_keys(jit_fn) -> set:
    try:
        return {(d, key) for d, cache in jit_fn.device_caches.items() for key in cache[0]}
    except Exception:  # noqa: BLE001 - diagnostics only; Triton's cache layout is not an API
        return set()


def _kernel_stats(jit_fn, before: set) -> dict:
    """Registers and spills of the kernel(s) compiled or loaded since ``before``."""
    try:
        stats = {}
        for d, key in _kernel_keys(jit_fn) - before:
            compiled = jit_fn.device_caches[d][0][key]
            stats = {"regs": getattr(compiled, "n_regs", None), "spills": getattr(compiled, "n_spills", None),
                     "smem": getattr(compiled.metadata, "shared", None)}
        return stats
    except Exception:  # noqa: BLE001
        return {}


def _rate(shape: dict, ms: float) -> dict:
    m, n, k = shape["M"], shape["N"], shape["K"]
    return {"gbps": round(k * n / 2 / (ms * 1e-3) / 1e9, 1), "tflops": round(2.0 * m * n * k / (ms * 1e-3) / 1e12, 2)}


def sweep(unit: str, shape: dict, deadline: float) -> None:
    """Time the baselines and every configuration of ``unit`` at ``shape``; end with a summary row."""
    from units.lib.harness import resolve
    from units.lib.index import get_unit

    spec = get_unit(unit)
    naive, solution = resolve(spec.naive), resolve(spec.solution)
    fn, jit_fn = _kernel(unit)
    inputs, w = _inputs(unit, shape)
    baselines = (("naive", naive, inputs), ("solution", solution, inputs),
                 ("cublas_bf16", torch.matmul, [inputs[0], w]))
    timed = {}  # name or config -> median ms
    for name, call, args in baselines:
        try:
            ms, cv = median_ms_and_cv(call, args)
            timed[name] = ms
            print_row(unit=unit, shape=shape, cfg=name, ms=ms, cv=cv, **_rate(shape, ms))
        except Exception as exc:  # noqa: BLE001
            print_row(unit=unit, shape=shape, cfg=name, error=str(exc)[:200])
    del w
    for cfg in _configs(unit, shape):
        if time.perf_counter() > deadline:
            print_row(unit=unit, shape=shape, cfg=cfg, skipped="budget")
            continue
        try:
            before = _kernel_keys(jit_fn)
            out = fn(*inputs, **cfg)
            err = relative_error(out, naive(*inputs))
            stats = _kernel_stats(jit_fn, before)
            ms, cv = median_ms_and_cv(lambda *args, cfg=cfg: fn(*args, **cfg), inputs)
            if err < MAX_ERR:
                timed[json.dumps(cfg)] = ms
            print_row(unit=unit, shape=shape, cfg=cfg, ms=ms, cv=cv, **_rate(shape, ms), err=err, **stats)
        except Exception as exc:  # noqa: BLE001 - a configuration that does not compile is a row too
            print_row(unit=unit, shape=shape, cfg=cfg, error=f"{type(exc).__name__}: {str(exc)[:200]}")
    del inputs
    torch.cuda.empty_cache()
    variants = {k: v for k, v in timed.items() if k not in ("naive", "solution", "cublas_bf16")}
    if variants and "naive" in timed:
        best = min(variants, key=variants.get)
        ratios = {f"vs_{name}": round(timed[name] / variants[best], 3) for name in ("naive", "solution", "cublas_bf16")
                  if name in timed}
        print_row(unit=unit, shape=shape, cfg="best", best=json.loads(best), ms=variants[best], **ratios,
             required_vs_naive=REQUIRED_MARGIN)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget-s", type=float, default=140.0, help="stop timing new configurations after this")
    parser.add_argument("--jobs", type=int, default=min(8, os.cpu_count() or 1), help="compile workers (0: none)")
    parser.add_argument("--only", choices=UNITS, help="one unit")
    parser.add_argument("--m", type=int, choices=[s["M"] for s in SHAPES], help="one M")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("bench.kerneldev.sweeps.fp4 times kernels on a CUDA GPU; none is visible", file=sys.stderr)
        return 2
    import triton

    start = time.perf_counter()
    units = [args.only] if args.only else list(UNITS)
    shapes = [s for s in SHAPES if args.m in (None, s["M"])]
    print_row(kind="provenance", **provenance("cuda", None, argv))
    print_row(unit="-", cfg="env", device=torch.cuda.get_device_name(), torch=torch.__version__,
         triton=triton.__version__, python=platform.python_version())
    _precompile([(u, s, c) for s in shapes for u in units for c in [{}, *_configs(u, s)]], args.jobs)
    for shape in shapes:
        for unit in units:
            sweep(unit, shape, start + args.budget_s)
    print_row(unit="-", cfg="done", s=round(time.perf_counter() - start, 1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
