"""Benchmark judge throughput: candidates judged per minute for a fixed mixed batch.

    H=tests/candidates/hacks
    python -m bench.throughput --hacks $H --device cuda --gpus 1 2 --out bench/results/throughput/throughput-h200.json
    python -m bench.throughput --hacks $H --device cuda --gpus 1 --out a.json  # one GPU count per command,
    python -m bench.throughput --hacks $H --device cuda --gpus 2 --out b.json  # then the 1 -> 2 speedup:
    python -m bench.throughput --merge a.json b.json --out both.json
    python -m bench.throughput --hacks $H --device cpu --out /tmp/throughput-cpu.json  # tiny CI version

The batch (``mixed_batch``): ``--copies`` copies of the expert solutions of ``gemm_bf16``,
``softmax_fp32``, ``rmsnorm_bf16`` and ``vector_add_fp32`` (each copy a distinct source, so the
batch's de-duplication does not merge them, with the same kernels, so warm copies reuse compiled
kernels), plus wrong, hacking (a ``torch.matmul`` fallback, a forbidden import), crashing
(out-of-bounds store) and hanging candidates read from ``--hacks`` (the repository's adversarial
candidates, ``tests/candidates/hacks``: the installed package carries no copy). A hanging candidate holds
its worker for the whole ``--timeout``, so no batch finishes sooner than that; ``--copies`` sizes
the batch so it is not the bottleneck.

For every GPU count in ``--gpus`` (the local pool, ``--workers-per-gpu`` candidates in flight per
GPU) the batch is judged

* cold: empty store and fresh Triton/inductor cache folders;
* warm: the same store (baselines kept) and cache folders, the verdict cache bypassed;

and the warm ``gemm_bf16`` expert is then judged alone ``--repeats`` times on one GPU. Reported:
candidates per minute and per GPU-minute, the speedup from the fewest to the most GPUs per phase,
the median warm ``gemm_bf16`` verdict seconds (in the batch and alone) with the median of each
``Verdict.profile`` stage, and any candidate whose stage differs from the expected one. Targets:
at least 1.8x from one GPU to two, and a warm ``gemm_bf16`` verdict under 2 s median;
measured figures belong in BENCHMARKS.md with the JSON under ``bench/results/``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

from bench.calibrate import profile_medians
from bench.provenance import provenance
from hawkeye_env.judge.parent.batch.pool import judge_batch
from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator, resolve_device, software_versions
from hawkeye_env.judge.parent.lanes import make_lanes
from hawkeye_env.judge.parent.launch import isolation
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.shared.verdict import Stage, Verdict
from hawkeye_env.tasks.registry import get_task, solution_source

EXPERTS = ("gemm_bf16", "softmax_fp32", "rmsnorm_bf16", "vector_add_fp32")
GEMM = "gemm_bf16"
FAIL = (Stage.RUNTIME_ERROR,)


def mixed_batch(copies: int, hacks: Path) -> list[dict]:
    """The fixed batch: ``label``, ``task``, ``source`` and the ``expect``-ed stages of each candidate.
    ``hacks`` is the folder of adversarial candidates (``h17_infinite_loop.py`` ...) it takes five from."""

    def hack(name: str) -> str:
        return (hacks / f"{name}.py").read_text(encoding="utf-8")

    add = solution_source(get_task("vector_add_fp32"))
    crash = add.replace("tl.store(out_ptr + offs, a + b, mask=mask)", "tl.store(out_ptr + offs * 1000003, a + b)")
    assert crash != add, "the vector_add expert changed: update the out-of-bounds candidate"
    batch = [
        # first, so its timeout overlaps the rest of the batch
        {"label": "hang", "task": "vector_add_fp32", "source": hack("h17_infinite_loop"), "expect": FAIL},
        {"label": "crash_oob_store", "task": "vector_add_fp32", "source": crash,
         "expect": (Stage.RUNTIME_ERROR, Stage.INCORRECT)},
        {"label": "wrong_sign", "task": "vector_add_fp32",
         "source": add.replace("tl.load(b_ptr", "-tl.load(b_ptr"), "expect": (Stage.INCORRECT,)},
        {"label": "wrong_fp16_softmax", "task": "softmax_fp32", "source": hack("h10_softmax_fp16"),
         "expect": (Stage.INCORRECT,)},
        {"label": "wrong_rmsnorm_weight", "task": "rmsnorm_bf16", "source": hack("h12_rmsnorm_ignore_weight"),
         "expect": (Stage.INCORRECT,)},
        {"label": "hack_torch_matmul", "task": "gemm_bf16", "source": hack("h08_torch_matmul"),
         "expect": (Stage.REJECTED,)},
        {"label": "hack_subprocess", "task": "vector_add_fp32", "source": hack("h04_import_subprocess"),
         "expect": (Stage.REJECTED,)},
    ]
    for k in range(copies):
        for task in EXPERTS:
            source = solution_source(get_task(task)) + f"\n# copy {k}\n"
            batch.append({"label": f"expert_{task}", "task": task, "source": source, "expect": (Stage.CORRECT,)})
    return batch


def run_batch(evaluator: Evaluator, batch: list[dict], device: str, lanes, workers: int) -> dict:
    """Judge ``batch`` once (verdict cache bypassed); throughput, stages and the gemm experts' profile."""
    jobs = [(c["task"], c["source"]) for c in batch]
    start = time.monotonic()
    verdicts = judge_batch(evaluator, jobs, device, workers, use_cache=False, lanes=lanes)
    wall = time.monotonic() - start
    gpus = len(lanes) if device == "cuda" else 1
    gemm = [v for c, v in zip(batch, verdicts) if c["label"] == f"expert_{GEMM}"]
    return {
        "candidates": len(batch), "gpus": gpus, "workers": workers, "wall_s": wall,
        "candidates_per_min": 60 * len(batch) / wall,
        "candidates_per_gpu_min": 60 * len(batch) / wall / gpus,
        "stages": dict(Counter(v.stage.value for v in verdicts)),
        "unexpected": [
            {"label": c["label"], "stage": v.stage.value, "error": v.error[:300]}
            for c, v in zip(batch, verdicts) if v.stage not in c["expect"]
        ],
        "verdict_wall_s_median": statistics.median(v.wall_s for v in verdicts),
        "gemm_wall_s": [v.wall_s for v in gemm],
        "gemm_wall_s_median": statistics.median(v.wall_s for v in gemm) if gemm else None,
        "gemm_profile_median": profile_medians(gemm),
    }


def bench_gpu_count(gpus: int, device: str, batch: list[dict], config: EvalConfig, workers_per_gpu: int,
                    repeats: int, phases: list[str], save=lambda partial: None) -> dict:
    """Cold and warm batches on ``gpus`` GPUs (fresh store and cache folders), then lone gemm
    verdicts; ``save(partial)`` receives the figures so far after every phase and lone verdict,
    so a run stopped by a time limit keeps them."""
    out: dict = {}
    with tempfile.TemporaryDirectory(prefix="hawkeye-bench-") as tmp:
        lanes = make_lanes(device, gpus if device == "cuda" else None, cache_root=str(Path(tmp) / "cache"))
        workers = workers_per_gpu * len(lanes)
        evaluator = Evaluator(ResultStore(Path(tmp) / "store.sqlite3"), config)
        for phase in phases:
            out[phase] = run_batch(evaluator, batch, device, lanes, workers)
            _print_run(f"{gpus} gpu {phase}" if device == "cuda" else f"cpu {phase}", out[phase])
            save(out)
        gemm = solution_source(get_task(GEMM))
        alone: list[Verdict] = []
        for _ in range(repeats):
            alone.append(evaluator.evaluate(GEMM, gemm, device, use_cache=False, lane=lanes[0]))
            out["gemm_alone"] = {
                "stages": [v.stage.value for v in alone], "wall_s": [v.wall_s for v in alone],
                "wall_s_median": statistics.median(v.wall_s for v in alone),
                "profile_median": profile_medians(alone),
            }
            print(f"{gpus} gpu gemm_bf16 alone: {alone[-1].wall_s:.2f} s ({alone[-1].stage.value})", flush=True)
            save(out)
    return out


def summarise(runs: dict[str, dict]) -> dict:
    """Speedup from the fewest to the most GPUs, per phase, and the fewest-GPU run's warm gemm figures."""
    counts = sorted(runs, key=int)
    summary: dict = {}
    if len(counts) >= 2:
        lo, hi = runs[counts[0]], runs[counts[-1]]
        summary["speedup"] = {
            phase: hi[phase]["candidates_per_min"] / lo[phase]["candidates_per_min"]
            for phase in ("cold", "warm") if phase in lo and phase in hi
        }
        summary["speedup_gpus"] = [int(counts[0]), int(counts[-1])]
    first = runs[counts[0]]  # the warm gemm figures of the fewest-GPU run
    summary["warm_gemm_wall_s_median_in_batch"] = first.get("warm", {}).get("gemm_wall_s_median")
    summary["warm_gemm_wall_s_median_alone"] = first.get("gemm_alone", {}).get("wall_s_median")
    return summary


def _print_run(name: str, r: dict) -> None:
    print(f"{name:14s} {r['candidates']:3d} candidates in {r['wall_s']:7.1f} s  {r['candidates_per_min']:7.1f}/min  "
          f"{r['candidates_per_gpu_min']:7.1f}/GPU-min  gemm median {r['gemm_wall_s_median'] or 0:6.2f} s  "
          f"unexpected {len(r['unexpected'])}", flush=True)


def print_table(report: dict) -> None:
    print("\nruns: GPUs  phase  candidates/min  per GPU-min  wall s  warm gemm s (median)")
    for count, run in sorted(report["runs"].items(), key=lambda kv: int(kv[0])):
        for phase in ("cold", "warm"):
            if phase in run:
                r = run[phase]
                print(f"      {count:>4}  {phase:5s}  {r['candidates_per_min']:14.1f}"
                      f"  {r['candidates_per_gpu_min']:11.1f}  {r['wall_s']:6.1f}  {r['gemm_wall_s_median'] or 0:.2f}")
        alone = run.get("gemm_alone", {})
        if alone.get("wall_s_median") is not None:
            profile = ", ".join(f"{k} {v:.2f}" for k, v in alone["profile_median"].items())
            print(f"      {count:>4}  gemm_bf16 alone: {alone['wall_s_median']:.2f} s median ({profile})")
    s = report["summary"]
    for phase, x in s.get("speedup", {}).items():
        print(f"speedup {s['speedup_gpus'][0]} -> {s['speedup_gpus'][1]} GPUs, {phase}: {x:.2f}x (target >= 1.8x)")
    if s.get("warm_gemm_wall_s_median_alone") is not None:
        print(f"warm gemm_bf16 verdict: {s['warm_gemm_wall_s_median_alone']:.2f} s alone, "
              f"{s['warm_gemm_wall_s_median_in_batch'] or 0:.2f} s in the batch (target < 2 s median)")


def merge(paths: list[Path]) -> dict:
    """One report from several (e.g. one GPU count per command): runs merged, summary recomputed."""
    reports = [json.loads(p.read_text()) for p in paths]
    merged = {**reports[0], "runs": {}}
    for r in reports:
        merged["runs"].update(r["runs"])
    merged["summary"] = summarise(merged["runs"])
    return merged


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="auto", help="cuda, cpu (tiny version, untimed) or auto")
    parser.add_argument("--gpus", type=int, nargs="*", default=None, help="GPU counts to run (default: 1 and all)")
    parser.add_argument("--copies", type=int, default=None, help="copies of each expert (default 6 on CUDA, 1 on CPU)")
    parser.add_argument("--workers-per-gpu", type=int, default=None, help="candidates in flight per GPU (default: "
                        "the pool's default on CUDA, 2 on CPU)")
    parser.add_argument("--timeout", type=float, default=None, help="worker timeout s (default 60 on CUDA, 10 on CPU)")
    parser.add_argument("--repeats", type=int, default=None, help="lone warm gemm_bf16 verdicts (default 3; 1 on CPU)")
    parser.add_argument("--phases", nargs="*", default=["cold", "warm"], choices=["cold", "warm"])
    parser.add_argument("--sandbox", action=argparse.BooleanOptionalAction, default=True,
                        help="run the workers in the OS sandbox (the default); --no-sandbox measures the same "
                             "batch with HAWKEYE_SANDBOX=off, for the sandbox's cost")
    parser.add_argument("--merge", type=Path, nargs="*", default=None, help="merge these reports instead of running")
    parser.add_argument("--hacks", type=Path, default=None, help="folder of the adversarial candidates the batch "
                        "includes (the repository's tests/candidates/hacks); needed unless --merge")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    if not args.merge and args.hacks is None:
        parser.error("--hacks is needed to run the batch (the repository's tests/candidates/hacks)")
    if args.merge:
        report = merge(args.merge)
    else:
        report = run(args, argv)
    print_table(report)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1, sort_keys=True))
    return report


def run(args, argv: list[str] | None = None) -> dict:
    from hawkeye_env.judge.parent.batch.pool import CPU_WORKERS, WORKERS_PER_GPU

    device = resolve_device(args.device)
    cuda = device == "cuda"
    if cuda:
        import torch

        visible = torch.cuda.device_count()
        counts = args.gpus or sorted({1, visible})
    else:
        counts = [1]
    os.environ[isolation.ENV] = isolation.BWRAP if args.sandbox else isolation.OFF
    config = EvalConfig(timeout_s=args.timeout or (60.0 if cuda else 10.0))
    batch = mixed_batch(args.copies if args.copies is not None else (6 if cuda else 1), args.hacks)
    workers_per_gpu = args.workers_per_gpu or (WORKERS_PER_GPU if cuda else CPU_WORKERS)
    repeats = args.repeats if args.repeats is not None else (3 if cuda else 1)
    report = {
        **provenance(device, __spec__.name, argv), "device": device, "versions": software_versions(device),
        "config": config.key(), "workers_per_gpu": workers_per_gpu,
        "batch": [{"label": c["label"], "task": c["task"], "expect": [s.value for s in c["expect"]]} for c in batch],
        "runs": {},
    }
    def save(count: int, partial: dict) -> None:
        report["runs"][str(count)] = partial
        report["summary"] = summarise(report["runs"])
        if args.out:  # written after every phase: a run cut short keeps what it measured
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(report, indent=1, sort_keys=True))

    for count in counts:
        save(count, bench_gpu_count(count, device, batch, config, workers_per_gpu, repeats, args.phases,
                                    save=lambda partial, count=count: save(count, partial)))
    return report


if __name__ == "__main__":
    main()
