"""H200 sweep of the ``warp_specialization`` unit: does warp specialization win, and robustly? (CUDA only)

    python -m bench.kerneldev.sweeps.ws [--budget-s 150] [--rounds 5] [--only NAME]
                                        [--shapes 8192x8192x512,4096x4096x4096]

Run from the repository root with the repository on PYTHONPATH. For each shape (M = N = 8192 with
K = 512, 1024, 2048, where the 128 MiB bf16 output write is a large share of the time; the unit is
measured at K = 512; then 4096^3, where the per-tile pair was measured first) and each group of
``kernel.COMPARISONS`` (a warp-specialized config, then the same kernel without the keyword, nested
and flattened), the group's members are
timed ``--rounds`` times interleaved (A, B, C, A, B, C, ...; 5 by default) with the judge's
``time_callable`` (L2 flushed, inputs refilled, 30 iterations) with ``hide_launch``, as the units
harness times a unit: device time, the host's launch (descriptor building included) queued behind
a GPU spin. Run-to-run drift shows as spread between rounds, not as a difference between configs.
cuBLAS (``torch.matmul``) is timed once per round at each shape.

Every config is first compiled and run once in a subprocess of its own, several at a time; one whose
compilation raises or kills the process gets an error row and is left out, and the timing process
finds the others in Triton's on-disk cache. The sweep stops starting new shapes and groups once
``--budget-s`` seconds have passed since it began (a ``skipped`` row says what was left).

One JSON line each:
- ``{"kind": "env", ...}``: versions, device, SM count, the groups' members;
- ``{"kind": "preflight", "seconds", "ok", "failed"}``: the compile phase; ``{"kind": "done"}`` last;
- ``{"kind": "error", "cfg", "shape"?, "error"}``: a config that failed to compile or run;
- ``{"kind": "compiled", "cfg", "num_warps", "shared", "n_regs", "n_spills"}``: per config that
  compiled, its warps after warp specialization (12 when a ``num_warps=4`` kernel was split into a
  producer and two consumer groups, 4 or 8 when it was not), shared memory bytes, registers per
  thread and spills;
- ``{"kind": "time", "cfg", "group", "role", "shape", "round", "ms", "cv", "tflops", "err"}``: one
  measurement; ``role`` is ``ws``, ``plain``, ``plain_flat`` or ``cublas``; ``err`` is the relative
  L2 difference from ``torch.matmul`` on the same inputs (two bf16 roundings: a few 1e-3);
- ``{"kind": "summary", "group", "shape", "ws", "vs", "speedups", "median"}``: per specialized and
  unspecialized member of a group, ``vs``'s time over ``ws``'s time in each round (> 1: the
  specialized kernel is faster) and their median;
- ``{"kind": "skipped", "shape", "group"?, "why"}``: work the budget did not leave time for.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import statistics
import subprocess
import sys
import time

import torch
import triton

from bench.provenance import provenance
from hawkeye_env.judge.sandboxed.common.timing import time_callable
from units.warp_specialization import kernel

ITERS, RETRIES, ROUNDS = 30, 1, 5
SHAPES = ((8192, 8192, 512), (8192, 8192, 1024), (8192, 8192, 2048), (4096, 4096, 4096))
# Compile-and-run shape of the subprocesses: at least 132 tiles of 128x256 (32 x 8 = 256), so the
# persistent kernels get the same NUM_PROGRAMS (the SM count), and every size a multiple of 16, so
# Triton specializes the arguments as at the timed shapes and the timing process hits the cache.
PREFLIGHT_SHAPE = (4096, 2048, 256)
PREFLIGHT_TIMEOUT_S = 90
PREFLIGHT_WORKERS = min(12, os.cpu_count() or 1)  # ptxas is single-threaded; the H200 host has 16 cores
BUDGET_S = 150.0


def _row(**fields) -> None:
    print(json.dumps(fields), flush=True)


def _rel_err(x: torch.Tensor, y: torch.Tensor) -> float:
    x, y = x.float(), y.float()
    return float((x - y).norm() / y.norm().clamp_min(1e-12))


def _inputs(m: int, n: int, k: int) -> list[torch.Tensor]:
    g = torch.Generator(device="cuda").manual_seed(0)
    return [torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=g),
            torch.randn(k, n, device="cuda", dtype=torch.bfloat16, generator=g)]


def _role(config: kernel.GemmConfig) -> str:
    if config.warp_specialize:
        return "ws"
    return "plain_flat" if config.flatten else "plain"


def _compiled_metadata() -> dict:
    """Warps (counted after warp specialization: 12 for a split ``num_warps=4`` kernel), shared
    memory, registers and spills of the one kernel this process compiled; {} if Triton keeps them
    elsewhere."""
    try:
        for jit_fn in (kernel._persistent_ws_matmul_kernel, kernel._ws_matmul_kernel):
            for cache in jit_fn.device_caches.values():
                for compiled in cache[0].values():
                    md = compiled.metadata
                    return {"num_warps": md.num_warps, "shared": md.shared, "n_regs": getattr(compiled, "n_regs", None),
                            "n_spills": getattr(compiled, "n_spills", None)}
    except Exception:  # noqa: BLE001 - introspection is a bonus, never a failure
        pass
    return {}


def compile_only(name: str) -> int:
    """Subprocess body: compile and run candidate ``name`` once at ``PREFLIGHT_SHAPE``; print its
    compiled metadata as one JSON line."""
    a, b = _inputs(*PREFLIGHT_SHAPE)
    out = kernel.matmul(a, b, name)
    torch.cuda.synchronize()
    err = _rel_err(out, torch.matmul(a, b))
    if not err < 1e-2:
        print(f"relative error {err:.3g} against torch.matmul at {PREFLIGHT_SHAPE}", file=sys.stderr)
        return 1
    print(json.dumps(_compiled_metadata()), flush=True)
    return 0


def preflight(names: list[str]) -> tuple[dict[str, str], dict[str, dict]]:
    """Compile every candidate in its own subprocess, in parallel; returns ``{name: error}`` of the
    failures and ``{name: compiled metadata}`` of the others."""
    def one(name: str) -> tuple[str, str, dict]:
        cmd = [sys.executable, "-m", "bench.kerneldev.sweeps.ws", "--compile-only", name]
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=PREFLIGHT_TIMEOUT_S, cwd=root)
        except subprocess.TimeoutExpired:
            return name, f"compile-and-run timed out after {PREFLIGHT_TIMEOUT_S} s", {}
        if done.returncode == 0:
            try:
                return name, "", json.loads(done.stdout.strip().splitlines()[-1])
            except (IndexError, ValueError):
                return name, "", {}
        lines = [ln for ln in done.stderr.strip().splitlines() if ln.strip()]
        return name, f"exit {done.returncode}: " + " | ".join(lines[-3:])[-400:], {}

    with concurrent.futures.ThreadPoolExecutor(max_workers=PREFLIGHT_WORKERS) as pool:
        results = list(pool.map(one, names))
    return {n: err for n, err, _ in results if err}, {n: md for n, err, md in results if not err}


def _time(fn, inputs: list) -> tuple[float, float]:
    r = time_callable(fn, list(inputs), iters=ITERS, retries=RETRIES, seed=0, keep=0, hide_launch=True)
    return r["median_ms"], r["cv"]


def sweep_shape(m: int, n: int, k: int, groups: list[tuple[int, list]], failed: dict[str, str],
                deadline: float, rounds: int = ROUNDS) -> None:
    """cuBLAS, then each group's members in interleaved rounds, then the group's speedup summaries."""
    shape = {"M": m, "N": n, "K": k}
    flops = 2.0 * m * n * k
    inputs = _inputs(m, n, k)

    def measure(cfg: str, group, role: str, fn, rnd: int, err: float) -> float | None:
        try:
            ms, cv = _time(fn, inputs)
        except Exception as exc:  # noqa: BLE001 - a config that fails is a row too
            failed[cfg] = f"{type(exc).__name__}: {str(exc)[:300]}"
            _row(kind="error", cfg=cfg, shape=shape, error=failed[cfg])
            return None
        _row(kind="time", cfg=cfg, group=group, role=role, shape=shape, round=rnd, ms=ms, cv=cv,
             tflops=flops / ms / 1e9, err=err)
        return ms

    for rnd in range(rounds):
        measure("cublas", None, "cublas", torch.matmul, rnd, 0.0)

    for index, members in groups:
        if time.monotonic() > deadline:
            _row(kind="skipped", shape=shape, group=index, why="time budget spent")
            continue
        errs: dict[str, float] = {}
        for config in members:
            if config.name in failed:
                continue
            try:
                errs[config.name] = _rel_err(kernel.launch(*inputs, config), torch.matmul(*inputs))
            except Exception as exc:  # noqa: BLE001
                failed[config.name] = f"{type(exc).__name__}: {str(exc)[:300]}"
                _row(kind="error", cfg=config.name, shape=shape, error=failed[config.name])
        times: dict[str, list[float]] = {c.name: [] for c in members}
        for rnd in range(rounds):
            for config in members:
                if config.name in failed:
                    continue
                ms = measure(config.name, index, _role(config), lambda a, b, c=config: kernel.launch(a, b, c),
                             rnd, errs[config.name])
                if ms is not None:
                    times[config.name].append(ms)
        for ws in (c for c in members if c.warp_specialize and len(times[c.name]) == rounds):
            for other in (c for c in members if not c.warp_specialize and len(times[c.name]) == rounds):
                speedups = [o / w for o, w in zip(times[other.name], times[ws.name])]
                _row(kind="summary", group=index, shape=shape, ws=ws.name, vs=other.name,
                     speedups=[round(s, 4) for s in speedups], median=round(statistics.median(speedups), 4))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget-s", type=float, default=BUDGET_S)
    parser.add_argument("--shapes", default=",".join("x".join(map(str, s)) for s in SHAPES),
                        help="comma-separated MxNxK")
    parser.add_argument("--only", default="", help="keep groups with a member whose name contains this")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="interleaved timing rounds per group")
    parser.add_argument("--compile-only", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("bench.kerneldev.sweeps.ws times kernels on a CUDA GPU; none is visible, nothing to do", file=sys.stderr)
        return 2
    if args.compile_only:
        return compile_only(args.compile_only)

    start = time.monotonic()
    deadline = start + args.budget_s
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",") if s]
    groups = [(i, list(g)) for i, g in enumerate(kernel.COMPARISONS) if any(args.only in c.name for c in g)]
    props = torch.cuda.get_device_properties(0)
    _row(kind="provenance", **provenance("cuda", None, argv))
    _row(kind="env", torch=torch.__version__, triton=triton.__version__, cuda=torch.version.cuda,
         device=props.name, sms=props.multi_processor_count, iters=ITERS, rounds=args.rounds,
         groups={i: [c.name for c in g] for i, g in groups})

    names = [c.name for _, g in groups for c in g]
    failed, compiled = preflight(names)
    for name, err in failed.items():
        _row(kind="error", cfg=name, error=err)
    for name, metadata in compiled.items():
        _row(kind="compiled", cfg=name, **metadata)
    _row(kind="preflight", seconds=round(time.monotonic() - start, 1), ok=len(names) - len(failed), failed=len(failed))

    for m, n, k in shapes:
        if time.monotonic() > deadline:
            _row(kind="skipped", shape={"M": m, "N": n, "K": k}, why="time budget spent")
            continue
        sweep_shape(m, n, k, groups, failed, deadline, args.rounds)
        torch.cuda.empty_cache()
    _row(kind="done", seconds=round(time.monotonic() - start, 1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
