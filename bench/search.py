"""Judge throughput on the search policy's batch, with and without the OS sandbox, in one run.

    python -m bench.search --device cuda --n 16 \\
        --tasks vector_add_fp32,softmax_fp32,rmsnorm_bf16,gemm_bf16 \\
        --phases bwrap:8 off:8 worker:8 bwrap:4 --budget-s 480 \\
        --out bench/results/search-throughput/search-throughput-h200-<date>.json
    python -m bench.search --device cpu --n 2 --tasks vector_add_fp32 --phases bwrap:2 off:2  # tiny

The batch is what ``hawkeye eval --policy search --n N`` judges on its first turn: sample ``i`` of
``SearchPolicy(seed=0)`` for each task (the expert, its unit seeds, then knob mutations), each a
distinct source. The tasks' baselines are measured once, first, into one store (their seconds are
reported apart); then each phase judges the whole batch with the verdict cache bypassed, fresh
compile-cache folders and ``WORKERS`` candidates in flight on one GPU. A phase is
``SANDBOX:WORKERS`` with SANDBOX one of

* ``bwrap``: the OS sandbox and the trusted replay (the default judge: each worker and replay
  process forked from a pre-imported zygote, ``forkserver.py``);
* ``bwrap-fresh``: the same with ``HAWKEYE_FORKSERVER=0``: a fresh process each (the fork
  server's own gain);
* ``off``: ``HAWKEYE_SANDBOX=off``, replay on (the sandbox's own cost);
* ``worker``: ``HAWKEYE_SANDBOX=off HAWKEYE_REPLAY=off``: outputs and times from the candidate's
  worker, as the judge ran before both;

and ``+SCHEDULE`` (``bwrap+blocking:8``) runs the phase's processes with ``HAWKEYE_CUDA_SCHEDULE``
set (``cuda_schedule.py``: how a process's host thread waits for its GPU).

Reported per phase: verdicts per minute from the phase's start and between its first and last
verdict (one GPU, so also per GPU-minute), the stages, the median verdict seconds and the median
of each ``Verdict.profile`` stage, the median of what a verdict's wall time holds beyond its
consecutive stages (``PARTS``), where the host's CPU went (``host_load.py``) and, since the batch is
the search policy's first turn, its best-of-N metrics (``best_of_n``: the same ``evals.candidates``
summary as ``hawkeye eval``'s ``results.json``, on the device time of the phase's judge). A phase that
would start after ``--budget-s`` is skipped; the JSON is rewritten after each phase. The
target: at least 27 verdicts per GPU-minute sandboxed. Figures belong in BENCHMARKS.md with the
JSON under ``bench/results/``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

from bench.calibrate import profile_medians
from bench.host_load import HostLoad
from bench.provenance import provenance
from evals.candidates import Candidate, summarise
from hawkeye_env.edits import extract_source
from hawkeye_env.judge.parent import record_replay
from hawkeye_env.judge.parent.batch.pool import judge_batch
from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator, resolve_device, software_versions
from hawkeye_env.judge.parent.lanes import make_lanes
from hawkeye_env.judge.parent.launch import forkserver, isolation, standby
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.shared import cuda_schedule
from hawkeye_env.judge.shared.verdict import Stage, Verdict
from policies.search import SearchPolicy

TASKS = ("vector_add_fp32", "softmax_fp32", "rmsnorm_bf16", "gemm_bf16")
# A verdict's consecutive stages in the trusted parent (``Verdict.profile``); what its wall time
# holds beyond their sum is reported as ``unaccounted_s``.
PARTS = ("static_s", "baselines_s", "worker_start_s", "worker_wall_s", "plan_check_s", "replay_start_s",
         "replay_wall_s", "compare_s")
# Settings of the judge a run's command line records when they are set.
ENV_RECORDED = (standby.DEPTH_ENV, standby.ENV_FLAG)
# SANDBOX -> (HAWKEYE_SANDBOX, HAWKEYE_REPLAY, HAWKEYE_FORKSERVER); only a sandboxed worker is forked
MODES = {"bwrap": (isolation.BWRAP, "on", "1"), "bwrap-fresh": (isolation.BWRAP, "on", "0"),
         "off": (isolation.OFF, "on", "0"), "worker": (isolation.OFF, "off", "0")}
PHASE_ENV = (isolation.ENV, record_replay.ENV_FLAG, forkserver.ENV_FLAG, cuda_schedule.ENV)


def search_batch(tasks: list[str], n: int, seed: int = 0) -> list[tuple[str, str]]:
    """``(task, source)`` of the first-turn samples ``hawkeye eval --policy search --n n`` judges."""
    policy = SearchPolicy(seed=seed)
    jobs = []
    for task in tasks:
        obs = {"task_id": task, "prompt": "", "source": "", "feedback": "", "turn": 0}
        [replies] = policy.sample([obs], n=n)
        jobs += [(task, extract_source(r)) for r in replies]
    return jobs


def parse_phase(text: str) -> tuple[str, int, str | None]:
    """``"bwrap:8"`` -> ``("bwrap", 8, None)``, ``"bwrap+yield:8"`` -> ``("bwrap", 8, "yield")``
    (the phase's ``HAWKEYE_CUDA_SCHEDULE``); raises ``ValueError`` on an unknown mode, schedule or
    count."""
    head, _, workers = text.partition(":")
    mode, _, schedule = head.partition("+")
    if (mode not in MODES or not workers.isdigit() or int(workers) < 1
            or (schedule and schedule not in cuda_schedule.FLAGS)):
        raise ValueError(f"phase {text!r}: expected SANDBOX[+SCHEDULE]:WORKERS, SANDBOX one of {sorted(MODES)}, "
                         f"SCHEDULE one of {sorted(cuda_schedule.FLAGS)}")
    return mode, int(workers), schedule or None


def run_phase(evaluator: Evaluator, jobs: list[tuple[str, str]], device: str, mode: str, workers: int,
              schedule: str | None = None) -> dict:
    """Judge ``jobs`` once in ``mode`` with ``workers`` in flight on one lane (fresh cache folders),
    the judge's processes under CUDA's ``schedule`` when given (``cuda_schedule.py``)."""
    sandbox, replay, fork = MODES[mode]
    saved = {k: os.environ.get(k) for k in PHASE_ENV}
    os.environ[isolation.ENV], os.environ[record_replay.ENV_FLAG] = sandbox, replay
    os.environ[forkserver.ENV_FLAG] = fork
    os.environ.pop(cuda_schedule.ENV, None)
    if schedule:
        os.environ[cuda_schedule.ENV] = schedule
    done_at: list[float] = []
    lock = threading.Lock()
    try:
        with tempfile.TemporaryDirectory(prefix="hawkeye-bench-search-") as tmp:
            lanes = make_lanes(device, 1 if device == "cuda" else None, cache_root=str(Path(tmp) / "cache"))
            start = time.monotonic()

            def arrived(_i: int, _v: Verdict) -> None:
                with lock:
                    done_at.append(time.monotonic() - start)

            with HostLoad() as load:
                verdicts = judge_batch(evaluator, jobs, device, workers, use_cache=False, on_verdict=arrived,
                                       lanes=lanes)
            wall = time.monotonic() - start
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    done_at.sort()
    span = done_at[-1] - done_at[0] if len(done_at) > 2 else 0.0  # two arrivals make no rate
    return {
        "mode": mode, "sandbox": sandbox, "replay": replay, "forkserver": fork == "1", "workers": workers,
        "verdicts": len(verdicts),
        "cuda_schedule": schedule or "auto",
        "wall_s": wall, "verdicts_per_min": 60 * len(verdicts) / wall if wall else None,
        "verdicts_per_min_after_first": 60 * (len(done_at) - 1) / span if span else None,
        "first_verdict_s": done_at[0] if done_at else None,
        "stages": dict(Counter(v.stage.value for v in verdicts)),
        "verdict_wall_s_median": statistics.median(v.wall_s for v in verdicts) if verdicts else None,
        "profile_median_s": profile_medians(verdicts),
        "unaccounted_s_median": statistics.median(unaccounted(v) for v in verdicts) if verdicts else None,
        "host": load.report(),
        "errors": sorted({v.error.strip().splitlines()[-1][:300] for v in verdicts if v.error.strip()})[:5],
        "incorrect": [f"{v.task}: {v.feedback[:300]}" for v in verdicts if v.stage is Stage.INCORRECT][:5],
        "best_of_n": best_of_n(jobs, verdicts),
    }


def best_of_n(jobs: list[tuple[str, str]], verdicts: list[Verdict]) -> dict:
    """The phase's verdicts as ``hawkeye eval --policy search``'s first turn: ``evals.candidates``'
    metrics (per task: correct rate, best-of-k reward and speedup over the fastest baseline, best
    speedup over each baseline), each sample one trajectory of one turn."""
    by_task: dict[str, list[list[Candidate]]] = {}
    for (task, _source), v in zip(jobs, verdicts):
        trajs = by_task.setdefault(task, [])
        trajs.append([Candidate(
            task=task, sample=len(trajs), turn=0, source_hash="", stage=v.stage.value, reward=v.reward,
            speedup=dict(v.speedup), violations=[x.code for x in v.violations], compiled=v.compiled,
            correct=v.correct, timed=v.timed, cached=v.cached)])
    return summarise(by_task, turns=1)


def unaccounted(v: Verdict) -> float:
    """Seconds of ``v``'s wall time outside its ``PARTS``."""
    return v.wall_s - sum(float(v.profile.get(k) or 0.0) for k in PARTS)


def command_line(args) -> str:
    """The command that reproduces a run with ``args`` (the output path left out)."""
    env = [f"{k}={os.environ[k]}" for k in ENV_RECORDED if os.environ.get(k)]
    parts = [*env, "python -m bench.search", f"--device {args.device}", f"--tasks {args.tasks}",
             f"--n {args.n}", "--phases " + " ".join(args.phases)]
    if args.timeout is not None:
        parts.append(f"--timeout {args.timeout:g}")
    if args.budget_s is not None:
        parts.append(f"--budget-s {args.budget_s:g}")
    return " ".join(parts)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="auto")
    parser.add_argument("--tasks", default=",".join(TASKS))
    parser.add_argument("--n", type=int, default=16, help="samples per task")
    parser.add_argument("--phases", nargs="+", default=["bwrap:8", "off:8", "worker:8", "bwrap:4"],
                        help="SANDBOX[+SCHEDULE]:WORKERS, SANDBOX one of bwrap (workers forked from a pre-imported "
                        "zygote), bwrap-fresh (a fresh process each), off, worker; SCHEDULE (CUDA's host wait) one "
                        "of auto, spin, yield, blocking")
    parser.add_argument("--timeout", type=float, default=None, help="worker timeout s (default 60 on CUDA, 20 on CPU)")
    parser.add_argument("--budget-s", type=float, default=None, help="start no phase after this many seconds")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    try:
        phases = [parse_phase(p) for p in args.phases]
    except ValueError as exc:
        parser.error(str(exc))
    device = resolve_device(args.device)
    tasks = [t for t in args.tasks.split(",") if t]
    jobs = search_batch(tasks, args.n)
    config = EvalConfig(timeout_s=args.timeout or (60.0 if device == "cuda" else 20.0))
    began = time.monotonic()
    report: dict = {**provenance(device, __spec__.name, argv), "device": device, "versions": software_versions(device),
                    "args": {**vars(args), "out": str(args.out)}, "tasks": tasks, "n": args.n,
                    "command": command_line(args),
                    "candidates": len(jobs), "phases": []}

    def save() -> None:
        if args.out:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(report, indent=1, sort_keys=True, default=str))

    with tempfile.TemporaryDirectory(prefix="hawkeye-bench-search-store-") as tmp:
        evaluator = Evaluator(ResultStore(Path(tmp) / "store.sqlite3"), config)
        t = time.monotonic()
        report["baselines_missing"] = evaluator.prefetch_baselines(tasks, device, gpus=1)
        report["baselines_s"] = time.monotonic() - t
        save()
        for mode, workers, schedule in phases:
            if args.budget_s is not None and time.monotonic() - began > args.budget_s:
                report["phases"].append({"mode": mode, "workers": workers, "cuda_schedule": schedule or "auto",
                                         "skipped": "budget"})
                continue
            row = run_phase(evaluator, jobs, device, mode, workers, schedule)
            report["phases"].append(row)
            name = f"{mode}+{schedule}" if schedule else mode
            print(f"{name}:{workers} {row['verdicts']} verdicts in {row['wall_s']:.1f} s, "
                  f"{row['verdicts_per_min'] or 0:.1f}/min ({row['verdicts_per_min_after_first'] or 0:.1f} after the "
                  f"first), {row['stages']}", flush=True)
            save()
    report["wall_s"] = time.monotonic() - began
    save()
    return report


if __name__ == "__main__":
    main()
