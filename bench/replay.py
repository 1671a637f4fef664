"""Benchmark the GPU judge's record-and-replay path: each task's expert judged once on CUDA.

    python -m bench.replay --tasks vector_add_fp32,gemm_bf16 \\
        --out bench/results/judge-replay/judge-replay-<gpu>-<date>.json

Per task: the verdict's stage and reward, the replayed device time, the replay's host launch time
and the scored time (``timing.py``), the speedups, and where the verdict's seconds went: the
recording worker, the replay process (its trials and its timing) and the parent's comparison.
A fresh store, so baselines are measured first (their wait is in ``verdict_s``, not in the rest).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from bench.provenance import provenance
from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator, software_versions
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.tasks.registry import get_task, solution_source


def row(v) -> dict:
    """The reported fields of one verdict."""
    p, t = v.profile, v.timing or {}
    return {"task": v.task, "stage": v.stage.value, "reward": v.reward, "error": v.error[:500],
            "device_ms": t.get("median_ms"), "host_launch_ms": t.get("host_launch_ms"),
            "scored_ms": v.times_ms.get("candidate"), "times_ms": v.times_ms, "speedup": v.speedup, "cv": t.get("cv"),
            "worker_s": p.get("worker_wall_s"), "replay_s": p.get("replay_wall_s"),
            "replay_trials_s": p.get("replay.trials_s"), "replay_timing_s": p.get("replay.timing_s"),
            "compare_s": p.get("compare_s"), "verdict_s": v.wall_s}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.replay", description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", required=True, help="comma-separated task ids")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    judge = Evaluator(ResultStore(Path(tempfile.mkdtemp()) / "results.sqlite3"), EvalConfig())
    rows = []
    for task in args.tasks.split(","):
        rows.append(row(judge.evaluate(task, solution_source(get_task(task)), "cuda", use_cache=False)))
        print(json.dumps({k: rows[-1][k] for k in ("task", "stage", "device_ms", "scored_ms", "replay_s")}), flush=True)
        args.out.write_text(json.dumps({**provenance("cuda", __spec__.name, argv), "device": "cuda",
                                        "versions": software_versions("cuda"), "verdicts": rows}, indent=1))


if __name__ == "__main__":
    main()
