"""Benchmark the judge itself: verdict wall time and timing noise, per task, on one device.

    python -m bench.judge --device cuda --out bench/results/verdict-latency/judge-h200.json

For every task it judges the expert solution once with an empty store ("cold": worker start,
Triton compile, correctness trials, candidate and baseline timing), then ``--repeats`` more times
with the store's verdict cache bypassed but baselines cached ("warm"), then once from the store
("cached"). Reports median wall seconds of each, the candidate's median time per verdict, and the
coefficient of variation of that median across repeated verdicts (timing noise).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from bench.provenance import provenance
from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator, resolve_device, software_versions
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.tasks.registry import get_task, list_tasks, solution_source


def bench_task(evaluator: Evaluator, task: str, device: str, repeats: int) -> dict:
    source = solution_source(get_task(task))
    t0 = time.monotonic()
    cold = evaluator.evaluate(task, source, device, use_cache=False)
    cold_s = time.monotonic() - t0
    warm_s, medians, warm_profiles = [], [], []
    for _ in range(repeats):
        t0 = time.monotonic()
        v = evaluator.evaluate(task, source, device, use_cache=False)
        warm_s.append(time.monotonic() - t0)
        warm_profiles.append(v.profile)
        if v.timed:
            medians.append(v.timing["median_ms"])
    t0 = time.monotonic()
    cached = evaluator.evaluate(task, source, device)
    cached_s = time.monotonic() - t0
    row = {
        "stage": cold.stage.value, "reward": cold.reward, "feedback": cold.feedback,
        "cold_wall_s": cold_s, "warm_wall_s_median": statistics.median(warm_s) if warm_s else None,
        "cached_wall_s": cached_s, "cached_hit": cached.cached,
        "times_ms": cold.times_ms, "speedup": cold.speedup, "timing": cold.timing,
        "candidate_median_ms_per_verdict": medians,
        "cold_profile": cold.profile, "warm_profiles": warm_profiles,
    }
    if len(medians) >= 2:
        row["verdict_to_verdict_cv"] = statistics.pstdev(medians) / statistics.fmean(medians)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--tasks", nargs="*", default=None)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    device = resolve_device(args.device)
    tasks = args.tasks or [s.id for s in list_tasks()]
    report = {
        **provenance(device, __spec__.name), "device": device,
        "versions": software_versions(device), "config": EvalConfig().key(), "tasks": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        evaluator = Evaluator(ResultStore(Path(tmp) / "bench.sqlite3"), EvalConfig())
        for task in tasks:
            r = report["tasks"][task] = bench_task(evaluator, task, device, args.repeats)
            print(f"{task:18s} {r['stage']:10s} cold {r['cold_wall_s']:6.1f} s  "
                  f"warm {r['warm_wall_s_median'] or 0:5.2f} s  cached {r['cached_wall_s']:.3f} s  "
                  f"cand {r['times_ms'].get('candidate', float('nan')):.4f} ms  speedup {r['speedup']}  "
                  f"cv {r.get('verdict_to_verdict_cv', float('nan')):.4f}", flush=True)
            if args.out:
                args.out.parent.mkdir(parents=True, exist_ok=True)
                args.out.write_text(json.dumps(report, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
