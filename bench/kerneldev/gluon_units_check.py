"""Check and time the Gluon units (ws_persistent_gemm, ws_fp8_gemm, ws_attention_fwd) on a Hopper GPU.

Run on a Hopper GPU (the H200: torch 2.11, Triton 3.6)::

    OUT=/some/dir python -m bench.kerneldev.gluon_units_check [--units NAME ...] [--quick] [--budget-s 540]

Per unit, each step in its own try/except so one failure never hides the others (tracebacks and
compile errors are printed in full and kept in the JSON):

1. ``compile``: ``units.lib.gluon_compile`` on this machine's Triton (threads, registers, setmaxnreg,
   spills, shared memory of every configuration);
2. ``correctness``: every configuration (``--quick``: the solution) at several shapes, odd ones
   included where the kernel masks (GEMMs: any M, N and K multiples of 8 or 16; attention needs
   S % 128 == 0 and D in {64, 128}, so its odd cases are odd head counts and GQA groups), outputs
   NaN-poisoned, against the float64 reference with the judge's ``compare`` (the tolerance of the
   unit harness, calibrated by the vendor result in native precision); FP8 also with per-row scales and on all-positive
   inputs, where accumulating in the tensor core without promotion is known to drift;
3. ``timing``: solution, every configuration, the unit's naive (Triton-language twin) and the vendor
   (``torch.matmul``; ``torch._scaled_mm`` with and without fast accumulation; SDPA with the cuDNN
   and flash backends) at the suite's shapes. Method: one CUDA graph of ``ITERS`` calls (events
   around eager calls if capture fails), replayed ``REPEATS`` times; per repeat the mean time a
   call; reported median, min, max and spread ((max - min) / median). No L2 flush: inputs stay as
   hot for the vendor as for the kernels;
4. ``harness``: ``units.lib.harness.measure_unit_gpu``, the unit's own metric and pass rule (launch
   hidden, L2 flushed), as ``hawkeye units verify --device cuda`` reports it.

Writes ``$OUT/gluon_units.json`` after every unit (partial results survive a timeout) and prints a
table of TFLOP/s with the ratio to the vendor.
"""

# ruff: noqa: B023 (every lambda built in a loop is called, or captured in a CUDA graph and replayed,
# before its loop variables move on)
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
import traceback

import torch
import torch.nn.functional as F

from bench.provenance import provenance

REPEATS, ITERS = 7, 50
OUT = os.environ.get("OUT", ".")
RESULTS: dict = {}
DEADLINE = [math.inf]


def _error() -> str:
    text = traceback.format_exc()
    print(text, flush=True)
    return text


def _save() -> None:
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "gluon_units.json"), "w") as f:
        json.dump(RESULTS, f, indent=1, default=str)


def time_ms(fn) -> dict:
    """Median, min, max and spread over ``REPEATS`` replays of ``ITERS`` calls of ``fn``, in ms a call."""
    fn()
    torch.cuda.synchronize()
    method = "cuda_graph"
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            fn()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(ITERS):
                fn()
        run = graph.replay
    except Exception as exc:  # capture refused (host sync in the wrapper...): time eager calls
        method = f"events, eager ({type(exc).__name__}: {exc})"

        def run():
            for _ in range(ITERS):
                fn()
    run()
    torch.cuda.synchronize()
    times = []
    for _ in range(REPEATS):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / ITERS)
    med = statistics.median(times)
    return {"median_ms": med, "min_ms": min(times), "max_ms": max(times), "spread": (max(times) - min(times)) / med,
            "repeats": REPEATS, "iters": ITERS, "method": method}


def timed(row: dict, label: str, fn, flops: float) -> None:
    """``row[label]`` = the timing of ``fn`` with TFLOP/s, or the error."""
    if time.time() > DEADLINE[0]:
        row[label] = {"skipped": "past --budget-s"}
        return
    try:
        t = time_ms(fn)
        t["tflops"] = flops / (t["median_ms"] * 1e-3) / 1e12
        row[label] = t
    except Exception:
        row[label] = {"error": _error()}
    finally:
        torch.cuda.empty_cache()


def checked(cases: list, label: str, fn, ref64, native, tol) -> None:
    """Append the judge's verdict of ``fn()`` against ``ref64`` to ``cases``."""
    from hawkeye_env.judge.parent.decide.correctness import compare
    from units.lib.harness import poisoned_empty

    try:
        with poisoned_empty():
            out = fn()
        torch.cuda.synchronize()
        v = compare(out, ref64, torch.bfloat16, tol, compute_device="cuda", native=native)
        cases.append({"case": label, "ok": v["ok"], "reason": v["reason"], "rel_l2": v["rel_l2"],
                      "max_err_ratio": v["max_err_ratio"]})
    except Exception:
        cases.append({"case": label, "ok": False, "error": _error()})
    mark = "ok  " if cases[-1]["ok"] else "FAIL"
    print(f"  {mark} {label}  {cases[-1].get('reason') or cases[-1].get('rel_l2', '')}", flush=True)


def compile_stats(name: str) -> list:
    from units.lib.gluon_compile import compile_unit
    from units.lib.index import get_unit

    reports = compile_unit(get_unit(name))
    for r in reports:
        if r["ok"]:
            print(f"  compile {r['name']}: {r['threads']} threads, {r['registers']} regs, setmaxnreg "
                  f"{r['setmaxnreg']}, spills {r['spill_bytes']} B, smem {r['shared_bytes']} B", flush=True)
        else:
            print(f"  compile {r['name']} FAILED:\n{r['error']}", flush=True)
    return reports


def harness(name: str) -> dict:
    from hawkeye_env.units_verify import JUDGE_CHECKS
    from units.lib.harness import measure_unit_gpu
    from units.lib.index import get_unit

    r = measure_unit_gpu(get_unit(name), JUDGE_CHECKS)
    print(f"  harness {r['metric']} at {r['shape']}: {r['values']} margin {r['margin']} (need {r['min_margin']}) "
          f"correct {r['correct']}", flush=True)
    return r


def _configs(module, quick: bool) -> dict:
    return {"solution": module.SOLUTION} if quick else dict(module.CONFIGS)


def bf16_gemm(quick: bool) -> dict:
    from hawkeye_env.tasks.spec import BF16
    from units.ws_persistent_gemm import kernel, naive

    configs = _configs(kernel, quick)
    res = {"correctness": [], "timing": []}
    # (M, N, K, b K-major): odd M and N, K below one tile, partial tiles everywhere.
    for m, n, k, kmaj in [(4096, 4096, 4096, False), (8192, 8192, 512, False), (1000, 1032, 520, False),
                          (129, 264, 72, False), (37, 8, 16, False), (1000, 1032, 520, True), (16, 6144, 4096, True)]:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = (torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t() if kmaj
             else torch.randn(k, n, device="cuda", dtype=torch.bfloat16))
        ref64, native = a.double() @ b.double(), a @ b
        for cname, cfg in configs.items():
            checked(res["correctness"], f"{cname} {m}x{n}x{k}{' kmajor-b' if kmaj else ''}",
                    lambda: kernel.matmul(a, b, cfg), ref64, native, BF16)
        del ref64
    # The suite's bf16 GEMM shapes (gemm_*, linear_* tasks; linear weights are [N, K]).
    for m, n, k, kmaj in [(4096, 4096, 4096, False), (8192, 8192, 8192, False), (16384, 1024, 8192, False),
                          (64, 4096, 16384, False), (1024, 28672, 4096, True), (8192, 4096, 14336, True),
                          (16, 6144, 4096, True), (8192, 8192, 512, False)]:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = (torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t() if kmaj
             else torch.randn(k, n, device="cuda", dtype=torch.bfloat16))
        row = {"shape": f"{m}x{n}x{k}", "b_k_major": kmaj}
        flops = 2.0 * m * n * k
        timed(row, "cublas", lambda: torch.matmul(a, b), flops)
        for cname, cfg in configs.items():
            timed(row, cname, lambda: kernel.matmul(a, b, cfg), flops)
        if not kmaj:
            timed(row, "naive_triton", lambda: naive.matmul(a, b), flops)
        res["timing"].append(row)
    return res


def fp8_gemm(quick: bool) -> dict:
    from hawkeye_env.tasks.spec import BF16
    from units.fp8_scaled_gemm.meta import FP8_MAX
    from units.ws_fp8_gemm import kernel, naive

    configs = _configs(kernel, quick)
    res = {"correctness": [], "timing": []}

    def quantized(m, n, k, positive):
        draw = torch.rand if positive else torch.randn
        a, b = draw(m, k, device="cuda"), draw(k, n, device="cuda")
        sa, sb = a.abs().amax().reshape(1) / FP8_MAX, b.abs().amax().reshape(1) / FP8_MAX
        return ((a / sa).to(torch.float8_e4m3fn), (b / sb).to(torch.float8_e4m3fn), sa, sb)

    for m, n, k in [(8192, 8192, 8192), (4096, 4096, 4096), (1000, 1040, 528), (129, 272, 96), (40, 16, 16)]:
        for positive in (False, True):
            a, b, sa, sb = quantized(m, n, k, positive)
            ref64 = (a.double() * sa.double()) @ (b.double() * sb.double())
            try:  # cuBLASLt's fp8 shape rules are stricter than the kernel's: calibrate where it runs
                native = torch._scaled_mm(a, b.t().contiguous().t(), sa, sb, out_dtype=torch.bfloat16)
            except RuntimeError:
                native = None
            for cname, cfg in configs.items():
                checked(res["correctness"], f"{cname} {m}x{n}x{k} {'positive' if positive else 'normal'}",
                        lambda: kernel.fp8_gemm_per_tensor(a, b, sa, sb, cfg), ref64, native, BF16)
            # Per-row scales (a scale per row of a, per column of b), the solution's configuration.
            ra, rb = torch.rand(m, device="cuda") / FP8_MAX, torch.rand(n, device="cuda") / FP8_MAX
            rows64 = (a.double() @ b.double()) * ra.double()[:, None] * rb.double()[None, :]
            try:
                rows_native = torch._scaled_mm(a, b.t().contiguous().t(), ra[:, None], rb[None, :],
                                               out_dtype=torch.bfloat16)
            except RuntimeError:
                rows_native = None
            checked(res["correctness"], f"per_row {m}x{n}x{k} {'positive' if positive else 'normal'}",
                    lambda: kernel.fp8_gemm_per_row(a, b, ra, rb), rows64, rows_native, BF16)
            del ref64, rows64
    for m, n, k in [(8192, 8192, 8192), (4096, 4096, 4096)]:
        a, b, sa, sb = quantized(m, n, k, False)
        b_kmajor = b.t().contiguous().t()  # what _scaled_mm needs; the Gluon wrapper reads it without a copy
        row = {"shape": f"{m}x{n}x{k}", "b_k_major": True}
        flops = 2.0 * m * n * k
        timed(row, "scaled_mm", lambda: torch._scaled_mm(a, b_kmajor, sa, sb, out_dtype=torch.bfloat16), flops)
        timed(row, "scaled_mm_fast_accum", lambda: torch._scaled_mm(a, b_kmajor, sa, sb, out_dtype=torch.bfloat16,
                                                                    use_fast_accum=True), flops)
        for cname, cfg in configs.items():
            timed(row, cname, lambda: kernel.fp8_gemm_per_tensor(a, b_kmajor, sa, sb, cfg), flops)
        timed(row, "naive_triton", lambda: naive.fp8_gemm_per_tensor(a, b_kmajor, sa, sb), flops)
        res["timing"].append(row)
    return res


def _sdpa(backend_name: str, q, k, v, causal: bool):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    backend = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}[backend_name]
    with sdpa_kernel(backend):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


def attention(quick: bool) -> dict:
    from hawkeye_env.tasks.spec import ATTENTION_BF16
    from units.online_softmax.attention import flash_attention
    from units.ws_attention_fwd import kernel

    configs = _configs(kernel, quick)
    res = {"correctness": [], "timing": []}
    for b_, h, hkv, s, d in [(2, 4, 4, 1024, 128), (1, 6, 2, 512, 64), (1, 3, 1, 128, 128), (2, 5, 5, 384, 64)]:
        q = torch.randn(b_, h, s, d, device="cuda", dtype=torch.bfloat16)
        k, v = (torch.randn(b_, hkv, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(2))
        kx, vx = k.repeat_interleave(h // hkv, 1), v.repeat_interleave(h // hkv, 1)
        for causal in (True, False):
            ref64 = F.scaled_dot_product_attention(q.double(), kx.double(), vx.double(), is_causal=causal)
            native = F.scaled_dot_product_attention(q, kx, vx, is_causal=causal)
            for cname, cfg in configs.items():
                checked(res["correctness"], f"{cname} B{b_} H{h} HKV{hkv} S{s} D{d} {'causal' if causal else 'full'}",
                        lambda: kernel.attention(q, k, v, causal, cfg), ref64, native, ATTENTION_BF16)
    for b_, h, hkv, s, d, causal in [(4, 32, 32, 4096, 128, True), (4, 32, 8, 4096, 128, True),
                                     (4, 32, 32, 4096, 128, False), (4, 32, 32, 4096, 64, True)]:
        q = torch.randn(b_, h, s, d, device="cuda", dtype=torch.bfloat16)
        k, v = (torch.randn(b_, hkv, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(2))
        kx, vx = k.repeat_interleave(h // hkv, 1), v.repeat_interleave(h // hkv, 1)  # vendors get expanded heads
        row = {"shape": f"B{b_} H{h} HKV{hkv} S{s} D{d}", "causal": causal}
        flops = 4.0 * b_ * h * s * s * d / (2 if causal else 1)
        for backend in ("cudnn", "flash"):
            timed(row, f"sdpa_{backend}", lambda: _sdpa(backend, q, kx, vx, causal), flops)
        for cname, cfg in configs.items():
            timed(row, cname, lambda: kernel.attention(q, k, v, causal, cfg), flops)
        timed(row, "naive_triton", lambda: flash_attention(q, k, v, causal), flops)
        res["timing"].append(row)
    return res


UNITS = {"ws_persistent_gemm": (bf16_gemm, "cublas"), "ws_fp8_gemm": (fp8_gemm, "scaled_mm"),
         "ws_attention_fwd": (attention, "sdpa_cudnn")}


def table(name: str, res: dict, vendor: str) -> None:
    print(f"\n{name}: TFLOP/s (median over {REPEATS} x {ITERS}; spread in %) and ratio to {vendor}")
    for row in res.get("timing", []):
        base = row.get(vendor, {}).get("median_ms")
        cells = []
        for label, t in row.items():
            if not isinstance(t, dict):
                continue
            if "median_ms" in t:
                ratio = f" {base / t['median_ms']:.2f}x" if base else ""
                cells.append(f"{label} {t['tflops']:.0f} (+-{100 * t['spread']:.1f}%){ratio}")
            else:
                cells.append(f"{label} {'skipped' if 'skipped' in t else 'ERROR'}")
        head = ", ".join(f"{k}={v}" for k, v in row.items() if not isinstance(v, dict))
        print(f"  {head}\n    " + "\n    ".join(cells))
    bad = [c["case"] for c in res.get("correctness", []) if not c["ok"]]
    n = len(res.get("correctness", []))
    print(f"  correctness: {n - len(bad)}/{n} ok" + (f"; failed: {bad}" if bad else ""))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", nargs="*", default=list(UNITS), choices=list(UNITS))
    parser.add_argument("--quick", action="store_true", help="the solution configuration only")
    parser.add_argument("--budget-s", type=float, default=540.0, help="no new timing starts after this")
    parser.add_argument("--no-harness", action="store_true", help="skip units.lib.harness.measure_unit_gpu")
    args = parser.parse_args()
    DEADLINE[0] = time.time() + args.budget_s
    import triton

    RESULTS["env"] = {"torch": torch.__version__, "triton": triton.__version__, "cuda": torch.version.cuda,
                      "device": torch.cuda.get_device_name(), "capability": torch.cuda.get_device_capability(),
                      "repeats": REPEATS, "iters": ITERS, "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    RESULTS.update(provenance("cuda", __spec__.name))
    print(json.dumps(RESULTS["env"]), flush=True)
    for name in args.units:
        run, vendor = UNITS[name]
        print(f"\n=== {name}", flush=True)
        entry = RESULTS.setdefault(name, {})
        for step, fn in (("compile", lambda: compile_stats(name)), ("checks", lambda: run(args.quick)),
                         ("harness", None if args.no_harness else lambda: harness(name))):
            if fn is None:
                continue
            try:
                entry[step] = fn()
            except Exception:
                entry[step] = {"error": _error()}
            torch.cuda.empty_cache()
            _save()
    for name in args.units:
        checks = RESULTS.get(name, {}).get("checks", {})
        if isinstance(checks, dict) and "timing" in checks:
            table(name, checks, UNITS[name][1])
        else:
            print(f"\n{name}: checks failed to run: see the error above / JSON")
    _save()
    print(f"\nwrote {os.path.join(OUT, 'gluon_units.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
