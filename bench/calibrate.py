"""Calibrate the judge on a GPU: false negatives, false positives and the noise of the speed.

    python -m bench.calibrate --device cuda [--tasks a,b] [--trials 50] [--verdicts 10]
                              [--in-flight 1 4] [--budget-s 540]
                              [--out bench/results/judge-calibration/judge-calibration-<gpu>-<date>.json]
    python -m bench.calibrate --merge part1.json part2.json --out judge-calibration-<gpu>-<date>.json

Three measurements per task, written to one JSON (rewritten after each step, so a run cut short
keeps what it finished):

1. **False negatives.** The task's expert solution (``registry.solution_source``) and each of its
   vendor baselines run on ``--trials`` planned trials with fresh seeds (``plan_trials``: every
   input distribution at the timed GPU shape, and the odd small shapes), each output judged by
   the verdict's own code: the parent's references (``references.trial_references``) and
   ``checks.check_trials``. Every failure is listed with its reason; the target is none.
2. **False positives.** The same trials with outputs an honest kernel would never produce
   (counted per trial and per verdict: a verdict runs one plan's trials and fails if any fails):
   the reference computed at a lower precision (fp32 tasks in bf16, bf16 tasks with operands
   rounded to fp8 e4m3), the expert's output with 1% of its rows zeroed, and with 0.1% of its
   elements zeroed. Each must fail every trial it is run on.
3. **Noise.** ``--verdicts`` verdicts of the expert through ``evaluate_many`` (distinct copies
   of its source, so the store cannot answer), one at a time and with each ``--in-flight`` count
   at once on one GPU: the scored speedup's median, min, max and max/min, and best-of-N over
   the copies against their median; the device time and host launch beside it, the phase's
   verdicts per minute and the median seconds of each verdict stage. The target is max/min <= 1.04.

The expert's and the vendor's code run in this (trusted) process for items 1-2; item 3 judges
them through the real judge, sandbox included.
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import tempfile
import time
import traceback
from pathlib import Path

import torch

from bench.calibration_outputs import HACKS, judge_output, load_solution, trial_outputs
from bench.provenance import provenance
from hawkeye_env.judge.parent.decide import references
from hawkeye_env.judge.parent.evaluator import (
    EvalConfig,
    Evaluator,
    evaluate_many,
    plan_trials,
    resolve_device,
    software_versions,
)
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.shared.verdict import Verdict
from hawkeye_env.tasks.registry import get_task, list_tasks, solution_source
from hawkeye_env.tasks.spec import TaskSpec

# The tasks that get 200 trials (they failed on the H200 before); the others get --trials.
HARD_TASKS = ("gla_fwd_bf16", "attention_causal_bf16", "attention_gqa_bf16", "delta_net_fwd_bf16",
              "gated_delta_net_fwd_bf16", "simple_gla_fwd_bf16", "simple_gla_long_bf16")
# One task per family for the noise measurement (memory-bound, GEMM, decode GEMM, FP8, FP4,
# attention, decode attention, linear attention).
NOISE_TASKS = ("rmsnorm_bf16", "gemm_bf16", "linear_decode_bf16", "fp8_gemm_per_tensor", "mxfp4_gemm_bf16",
               "attention_causal_bf16", "attention_decode_bf16", "simple_gla_fwd_bf16")


def correctness_rates(spec: TaskSpec, device: str, trials: int, seed: int, deadline: float) -> dict:
    """Items 1 and 2 of the module docstring for ``spec``."""
    module = load_solution(solution_source(spec), f"hawkeye_calibrate_{spec.id}")
    vendors = {}
    candidates = ["expert", *(f"vendor:{n}" for n in spec.vendor_baselines)]
    counts = {name: {"trials": 0, "failed": 0, "failures": [], "verdicts": 0, "verdicts_failed": 0}
              for name in [*candidates, *HACKS]}
    done, s = 0, seed
    began, first_plan_s = time.monotonic(), None
    while done < trials and time.monotonic() < deadline:
        failed_in_plan: dict[str, bool] = {}  # one plan is one verdict's trials: any failure fails it
        for trial in plan_trials(spec, device, s):
            trial.pop("rerun", None)
            if done >= trials or time.monotonic() > deadline:
                break
            outputs, reasons = trial_outputs(spec, module, trial, device)
            for name, reason in reasons.items():
                vendors.setdefault(name, reason)
            got = references.trial_references(spec, trial, device)
            for name, outs in outputs.items():
                if outs is None:
                    continue
                passed, v = judge_output(spec, trial, outs, got, device)
                counts[name]["trials"] += 1
                failed_in_plan[name] = failed_in_plan.get(name, False) or not passed
                if not passed:
                    counts[name]["failed"] += 1
                    if len(counts[name]["failures"]) < 5:
                        counts[name]["failures"].append({**{k: trial[k] for k in ("shape", "distribution", "seed")},
                                                         "reason": v.trials[-1].get("reason") or v.error})
            done += 1
            del outputs, got
        for name, failed in failed_in_plan.items():
            counts[name]["verdicts"] += 1
            counts[name]["verdicts_failed"] += int(failed)
        s += 104729
        first_plan_s = first_plan_s if first_plan_s is not None else time.monotonic() - began
    for name in HACKS:
        counts[name]["passed"] = counts[name]["trials"] - counts[name]["failed"]
    wall = time.monotonic() - began
    # the first plan pays the compiles and autotuning; the rest is the cost of a trial
    later = (wall - (first_plan_s or 0.0)) / max(1, done - min(done, len(plan_trials(spec, device, seed))))
    return {"trials": done, "vendors_unavailable": {k: v for k, v in vendors.items() if v}, "rates": counts,
            "wall_s": wall, "first_plan_s": first_plan_s, "later_trial_s": later, "seed": seed}


def _summary(values: list[float]) -> dict:
    if not values:
        return {"n": 0}
    med = statistics.median(values)
    return {"n": len(values), "median": med, "min": min(values), "max": max(values),
            "max_over_min": max(values) / min(values), "best_over_median": max(values) / med}


def noise(spec: TaskSpec, device: str, verdicts: int, in_flight: list[int], store: ResultStore) -> dict:
    """Item 3: scored speedups of ``verdicts`` distinct copies of the expert, per concurrency."""
    source = solution_source(spec)
    judge = Evaluator(store, EvalConfig())
    judge.prefetch_baselines([spec.id], device)
    out = {}
    for k in in_flight:
        jobs = [(spec.id, f"{source}\n# calibration copy {k}-{i}\n") for i in range(verdicts)]
        began = time.monotonic()
        if k == 1:
            got = [evaluate_many(judge, [job], device=device, workers=1, gpus=1)[0] for job in jobs]
        else:
            got = evaluate_many(judge, jobs, device=device, workers=k, gpus=1)
        wall = time.monotonic() - began
        speedups = [v.best_speedup for v in got if v.timed and v.best_speedup]
        times = [v.times_ms.get("candidate") for v in got if v.timed]
        out[str(k)] = {"speedup": _summary(speedups), "candidate_ms": _summary(times),
                       "device_ms": _summary([v.timing["median_ms"] for v in got if v.timed and v.timing]),
                       "host_launch_ms": _summary([v.timing["host_launch_ms"] for v in got
                                                   if v.timed and (v.timing or {}).get("host_launch_ms")]),
                       "host_launch_median_ms": _summary([v.timing["host_launch_median_ms"] for v in got if v.timed
                                                          and (v.timing or {}).get("host_launch_median_ms")]),
                       "wall_s": wall, "verdicts_per_min": 60 * len(got) / wall if wall else None,
                       "stages": [v.stage.value for v in got],
                       "imprecise": sum(1 for v in got if v.timed and not (v.timing or {}).get("precise", True)),
                       "profile_median_s": profile_medians(got),
                       "errors": sorted({v.error[:200] for v in got if v.error})[:3],
                       "timing": [{k2: x for k2, x in (v.timing or {}).items() if not isinstance(x, list)}
                                  for v in got[:3]]}
    return out


def profile_medians(verdicts: list[Verdict]) -> dict[str, float]:
    """Median seconds per profiled stage (recording worker, replay, comparison...) over ``verdicts``."""
    keys = sorted({k for v in verdicts for k, x in v.profile.items() if isinstance(x, (int, float))})
    return {k: statistics.median(v.profile[k] for v in verdicts if isinstance(v.profile.get(k), (int, float)))
            for k in keys}


def _add_rates(before: dict, entry: dict, seed) -> dict:
    """One task's correctness counts from two runs on distinct seeds: trials, failures and
    verdicts added per candidate, the first failures of both kept (at most 5). An entry without
    counts (an error) does not replace one with counts."""
    if "rates" not in entry:
        return before if "rates" in before else entry
    if "rates" not in before:
        return entry
    rates = {}
    for name in {*before["rates"], *entry["rates"]}:
        a, b = before["rates"].get(name), entry["rates"].get(name)
        if a is None or b is None:
            rates[name] = a or b
            continue
        rates[name] = {k: a.get(k, 0) + b.get(k, 0) for k in ("trials", "failed", "verdicts", "verdicts_failed")}
        rates[name]["failures"] = (a.get("failures", []) + b.get("failures", []))[:5]
        if "passed" in a or "passed" in b:
            rates[name]["passed"] = a.get("passed", 0) + b.get("passed", 0)
    seeds = before.get("seeds", [before.get("seed")]) + [seed]
    return {**before, "trials": before.get("trials", 0) + entry.get("trials", 0), "rates": rates,
            "seeds": [x for x in seeds if x is not None],
            "vendors_unavailable": {**before.get("vendors_unavailable", {}), **entry.get("vendors_unavailable", {})},
            "wall_s": before.get("wall_s", 0) + entry.get("wall_s", 0)}


def _parts(file: Path, report: dict) -> list[dict]:
    """The runs behind ``report``: its own ``parts`` when it is a merge itself, else the report."""
    return report.get("parts") or [{"file": Path(file).name, "args": report["args"], "versions": report["versions"],
                                     "commit": report.get("commit", ""), "wall_s": report.get("wall_s")}]


def _versions(each: list[dict]) -> dict:
    """One ``versions`` dict for runs with ``each`` of these: a key's values, distinct, in order."""
    keys = dict.fromkeys(k for v in each for k in v)
    return {k: ", ".join(dict.fromkeys(str(v[k]) for v in each if k in v)) for k in keys}


def merge(files: list[Path], out: Path) -> dict:
    """One report from the reports of several runs of this command (a GPU call's time limit splits
    a full calibration into parts, or parts run side by side): a task's correctness counts are
    added over the parts (each part runs its own ``--seed``, so the trials are distinct); a task's
    noise keeps the later part, unless the later one was skipped. ``parts`` lists each run's args,
    versions and wall time; ``versions`` holds each version the parts agree on, and where they
    differ (a judge changed between parts) their values in order, comma-separated."""
    reports = [json.loads(Path(f).read_text()) for f in files]
    parts = [part for f, r in zip(files, reports) for part in _parts(f, r)]
    merged = {"date": max(r["date"] for r in reports), "device": reports[0]["device"],
              "versions": _versions([p["versions"] for p in parts]), "args": reports[-1]["args"],
              "commit": ", ".join(dict.fromkeys(p["commit"] for p in parts if p.get("commit"))),
              "correctness": {}, "noise": {}, "parts": parts}
    for r in reports:
        for task, entry in r.get("correctness", {}).items():
            before = merged["correctness"].get(task)
            merged["correctness"][task] = _add_rates(before, entry, r["args"].get("seed")) if before else entry
        merged["noise"].update({task: entry for task, entry in r.get("noise", {}).items()
                                if "skipped" not in entry or task not in merged["noise"]})
    merged["wall_s"] = sum(r.get("wall_s") or 0 for r in reports)
    out.write_text(json.dumps(merged, indent=1, sort_keys=True, default=str))
    return merged


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="auto")
    parser.add_argument("--tasks", default="", help="comma-separated task ids (default: all)")
    parser.add_argument("--trials", type=int, default=50, help="trials per task (HARD_TASKS get 4x)")
    parser.add_argument("--verdicts", type=int, default=10, help="noise: verdicts per concurrency")
    parser.add_argument("--noise-tasks", default=",".join(NOISE_TASKS))
    parser.add_argument("--in-flight", type=int, nargs="*", default=[1, 4])
    parser.add_argument("--budget-s", type=float, default=540.0)
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--skip", nargs="*", default=[], choices=["correctness", "noise"])
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--merge", type=Path, nargs="*", default=None,
                        help="write one report (--out) from these reports of earlier runs, running nothing")
    return parser


def main(argv: list[str] | None = None) -> dict:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.merge:
        if args.out is None:
            parser.error("--merge needs --out")
        return merge(args.merge, args.out)
    device = resolve_device(args.device)
    if device == "cpu":  # kernels run under Triton's interpreter, bf16 fixed as in the judge's workers
        import os

        from hawkeye_env.judge.sandboxed.common.interpreter.fixes import install_interpreter_fixes

        os.environ["TRITON_INTERPRET"] = "1"
        install_interpreter_fixes()
    start = time.monotonic()
    deadline = start + args.budget_s
    tasks = [t for t in args.tasks.split(",") if t] or [s.id for s in list_tasks()]
    gpu = torch.cuda.get_device_name().split()[-1].lower() if device == "cuda" else "cpu"
    today = datetime.date.today().isoformat()
    out = args.out or Path(f"bench/results/judge-calibration/judge-calibration-{gpu}-{today}.json")
    report: dict = {**provenance(device, __spec__.name, argv), "device": device,
                    "versions": software_versions(device), "args": vars(args) | {"out": str(out)},
                    "correctness": {}, "noise": {}}

    def save() -> None:
        out.parent.mkdir(parents=True, exist_ok=True)
        report["wall_s"] = time.monotonic() - start
        out.write_text(json.dumps(report, indent=1, sort_keys=True, default=str))

    if "correctness" not in args.skip:
        # Time is shared among the tasks still to run, HARD_TASKS weighted by their 4x trials (what
        # a quick task leaves over goes to the rest).
        until = deadline - (deadline - time.monotonic()) * (0.5 if "noise" not in args.skip else 0.0)
        _correctness_phase(report, tasks, device, args, until, save)
    if "noise" not in args.skip and device == "cuda":
        _noise_phase(report, tasks, device, args, deadline, save)
    save()
    print(f"wrote {out}")
    return report


def _correctness_phase(report: dict, tasks: list[str], device: str, args, until: float, save) -> None:
    """``report["correctness"][task]`` for every task, each given its weighted share of the time
    left before ``until``; ``save()`` after each."""
    weight = {t: 4 if t in HARD_TASKS else 1 for t in tasks}
    for i, task in enumerate(tasks):
        spec = get_task(task)
        n = args.trials * weight[task]
        share = (until - time.monotonic()) * weight[task] / sum(weight[t] for t in tasks[i:])
        try:
            report["correctness"][task] = correctness_rates(spec, device, n, args.seed,
                                                            min(until, time.monotonic() + share))
        except Exception:  # noqa: BLE001 - recorded, the run goes on
            report["correctness"][task] = {"error": traceback.format_exc(limit=4)}
        torch.cuda.empty_cache() if device == "cuda" else None
        save()
        print(task, json.dumps({k: (v["trials"], v["failed"]) for k, v in
                                report["correctness"][task].get("rates", {}).items()}), flush=True)


def _noise_phase(report: dict, tasks: list[str], device: str, args, deadline: float, save) -> None:
    """``report["noise"][task]`` for the noise tasks among ``tasks``, none started after
    ``deadline``; ``save()`` after each."""
    store = ResultStore(Path(tempfile.mkdtemp(prefix="hawkeye-calibrate-")) / "results.sqlite3")
    for task in [t for t in args.noise_tasks.split(",") if t and t in tasks or not args.tasks]:
        if time.monotonic() > deadline:
            report["noise"][task] = {"skipped": "budget"}
            continue
        try:
            report["noise"][task] = noise(get_task(task), device, args.verdicts, args.in_flight, store)
        except Exception:  # noqa: BLE001
            report["noise"][task] = {"error": traceback.format_exc(limit=4)}
        save()
        print(task, json.dumps({k: v["speedup"] for k, v in report["noise"][task].items()
                                if isinstance(v, dict) and "speedup" in v}), flush=True)


if __name__ == "__main__":
    main()
