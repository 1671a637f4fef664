"""Benchmark the task suite: each expert solution against every baseline, and its speed targets.

    python -m bench.tasks --device cuda [--tasks gemm_bf16,attention_causal_bf16]
                                [--verdicts 5] [--workers 4] [--budget-s 540]
                                [--out bench/results/tasks-h200-2026-11-30.json]

For every task it judges the expert solution (``registry.solution_source``) through the one
``Evaluator``, with the judge baselines and the task's vendor baselines, on a fresh store so every
baseline is measured in this run. It measures the device-to-device copy bandwidth once (a large
``Tensor.copy_`` timed by the judge's ``time_callable``; bytes read + written) and reports per task:
the verdict stage, the expert's median time, each baseline's time and the speedup over it,
achieved TFLOP/s and GB/s (from the spec's ``flops`` / ``bytes_moved``), the fraction of copy
bandwidth, and every ``SPEC.targets`` entry with the measured ratio and met / missed. The JSON is
rewritten after each task, so a run cut short keeps what finished; a task whose judging fails is
recorded with its error and the run goes on. Tasks are judged through ``evaluate_many``: several
at once, spread over ``--gpus``, their timed sections never sharing a GPU (the judge's lanes).
It ends with a rich table and a Markdown table for BENCHMARKS.md. On CPU the solutions are judged
for correctness only and timing is marked as needing a GPU.

``--verdicts K`` judges K distinct copies of every expert (a comment apart, so nothing can answer
from a cache), in K rounds of one copy per task, each round one ``evaluate_many`` batch with
``--workers`` in flight; no round starts after ``--budget-s``. A task's row is its median verdict
by device time, with ``repeats``: the verdicts' count, their device time's and each speedup's
median, min, max and max/min, so one run gives the suite's figures and the noise between verdicts
of identical code under load (target: max/min <= 1.04).
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
import tempfile
import time
import traceback
from pathlib import Path

import torch
from rich.console import Console
from rich.table import Table

from bench.provenance import provenance
from hawkeye_env.judge.parent.decide.roofline import CEILINGS
from hawkeye_env.judge.parent.decide.speed_of_light import speed_of_light
from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator, evaluate_many, resolve_device, software_versions
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.shared.baseline_names import JUDGE_BASELINES
from hawkeye_env.tasks.registry import get_task, list_tasks, solution_source
from hawkeye_env.tasks.spec import TaskSpec

# Copy-bandwidth probe: 1 GiB per buffer, 17x the H200's 60 MB L2, so the copy streams from DRAM.
COPY_BYTES = 1 << 30
NEEDS_GPU = "needs a CUDA GPU"


def copy_bandwidth(iters: int, retries: int) -> dict:
    """Device-to-device ``dst.copy_(src)`` of ``COPY_BYTES`` fp32, timed like a candidate;
    ``gbps`` counts the bytes read and written."""
    from hawkeye_env.judge.sandboxed.common.timing import time_callable

    src = torch.empty(COPY_BYTES // 4, dtype=torch.float32, device="cuda")
    dst = torch.empty_like(src)
    t = time_callable(dst.copy_, [src], iters, retries, seed=0, keep=0)
    moved = 2 * src.nbytes
    return {"bytes_moved": moved, "median_ms": t["median_ms"], "cv": t["cv"],
            "gbps": moved / (t["median_ms"] * 1e-3) / 1e9}


def target_rows(spec: TaskSpec, row: dict, device: str) -> dict:
    """Every ``spec.targets`` entry: ``{"target", "measured", "status"}``; status is ``met``,
    ``missed``, ``unavailable`` (with ``reason``), or why it was not measured."""
    out = {}
    for name, want in spec.targets.items():
        entry = {"target": want, "measured": None}
        if not row.get("timed"):
            entry["status"] = NEEDS_GPU if device == "cpu" else "not timed"
        elif name == "copy_bandwidth":
            entry["measured"] = row.get("copy_fraction")
        elif name in row["speedup"]:
            entry["measured"] = row["speedup"][name]
        elif name in row["unavailable"]:
            entry.update(status="unavailable", reason=row["unavailable"][name])
        else:
            entry["status"] = "not measured"
        if entry["measured"] is not None:
            entry["status"] = "met" if entry["measured"] >= want else "missed"
        out[name] = entry
    return out


def task_row(spec: TaskSpec, v, device: str, copy: dict | None) -> dict:
    """The report row of ``spec`` from the verdict ``v`` of its expert solution."""
    row = {"stage": v.stage.value, "timed": v.timed, "error": v.error,
           "violations": [f"{x.code}: {x.message}" for x in v.violations], "reward": v.reward,
           "failed_trials": [t for t in v.trials if not t.get("ok")], "profile": v.profile}
    if device == "cpu":
        row["timing"] = NEEDS_GPU
    if v.timed:
        shape = dict(spec.gpu_shapes[0])
        ms = v.times_ms["candidate"]
        gbps = spec.bytes_moved(**shape) / (ms * 1e-3) / 1e9
        row.update(
            shape=shape, expert_ms=ms, expert_cv=v.timing.get("cv"),
            baselines_ms={n: t for n, t in v.times_ms.items() if n != "candidate"},
            speedup=dict(v.speedup), unavailable=dict(v.baselines_unavailable),
            tflops=spec.flops(**shape) / (ms * 1e-3) / 1e12, gbps=gbps,
            copy_fraction=gbps / copy["gbps"] if copy else None,
        )
    row["targets"] = target_rows(spec, row, device)
    return row


def _spread(values: list[float]) -> dict:
    """``{"median", "min", "max", "max_over_min"}`` of positive ``values``."""
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "max_over_min": max(values) / min(values)}


def repeated_row(spec: TaskSpec, verdicts: list, device: str, copy: dict | None) -> dict:
    """The row of ``spec`` from several verdicts of identical code: ``task_row`` of the verdict
    with the median device time (the first verdict when none was timed), plus ``repeats``."""
    timed = sorted((v for v in verdicts if v.timed), key=lambda v: v.times_ms["candidate"])
    row = task_row(spec, timed[(len(timed) - 1) // 2] if timed else verdicts[0], device, copy)
    repeats: dict = {"n": len(verdicts), "timed": len(timed), "stages": [v.stage.value for v in verdicts]}
    if timed:
        repeats["device_ms"] = _spread([v.times_ms["candidate"] for v in timed])
        names = sorted({n for v in timed for n in v.speedup})
        by_name = {n: [v.speedup[n] for v in timed if v.speedup.get(n)] for n in names}
        repeats["speedup"] = {n: _spread(xs) for n, xs in by_name.items() if xs}
        repeats["host_launch_ms"] = [(v.timing or {}).get("host_launch_ms") for v in timed]
    row["repeats"] = repeats
    return row


def _fmt(x, spec: str = ".3f") -> str:
    return "-" if x is None else format(x, spec)


def sol_cell(task: str, r: dict, gpu: str) -> str:
    """The expert's and each vendor baseline's share of the task's speed of light on ``gpu`` at the
    timed shape (``speed_of_light.py``; datasheet clocks where a row records no SM clock)."""
    if not r.get("expert_ms") or not r.get("shape"):
        return "-"
    light = speed_of_light(get_task(task), r["shape"], gpu)
    vendors = [(n, ms) for n, ms in sorted(r.get("baselines_ms", {}).items()) if n not in JUDGE_BASELINES]
    return ", ".join(f"{n} {light.ms / ms:.0%}" for n, ms in [("expert", r["expert_ms"]), *vendors] if ms)


def _cells(task: str, r: dict, gpu: str = "") -> list[str]:
    if "exception" in r:
        return [task, "error", "-", "-", "-", "-", "-", "-", "-", "-", r["exception"].strip().splitlines()[-1][:80]]
    speedups = ", ".join(f"{n} {s:.2f}x" for n, s in r.get("speedup", {}).items())
    speedups += "".join(f", {n} n/a" for n in r.get("unavailable", {}))
    targets = ", ".join(f"{n}>={t['target']}: {_fmt(t['measured'], '.2f')} {t['status']}"
                        for n, t in r["targets"].items())
    frac = r.get("copy_fraction")
    rep = r.get("repeats", {})
    spread = rep.get("device_ms")
    ms = _fmt(r.get("expert_ms"), ".4f")
    if spread and rep["timed"] > 1:
        ms += f" ({spread['min']:.4f}-{spread['max']:.4f})"
    stage = r["stage"] if not rep or len(set(rep["stages"])) < 2 else "/".join(sorted(set(rep["stages"])))
    verdicts = f"{rep['timed']} / {rep['n']}" if rep else "1"
    several = bool(spread) and rep["timed"] > 1
    spread_text = _fmt(spread["max_over_min"] if several else None, ".3f")
    return [task, stage, verdicts, ms, spread_text, _fmt(r.get("tflops"), ".1f"), _fmt(r.get("gbps"), ".0f"),
            "-" if frac is None else f"{frac:.0%}", sol_cell(task, r, gpu), speedups or r.get("timing", "-"),
            targets or "-"]


HEADER = ["task", "stage", "timed / verdicts", "expert device ms, median (min-max)", "max/min", "TFLOP/s", "GB/s",
          "of copy BW", "of speed of light", "speedup", "targets"]


def render(report: dict) -> tuple[Table, str]:
    """A rich table and the same rows as Markdown (for BENCHMARKS.md)."""
    copy = report.get("copy_bandwidth")
    title = f"hawkeye tasks on {report['gpu']} ({report['date']})"
    if copy:
        title += f", copy {copy['gbps']:.0f} GB/s"
    table = Table(title=title)
    for col in HEADER:
        table.add_column(col, no_wrap=col == "task")
    lines = [f"Tasks on {report['gpu']}, driver {report['driver']}, torch {report['versions']['torch']}, "
             f"triton {report['versions']['triton']}, {report['date']}"
             + (f"; copy bandwidth {copy['gbps']:.0f} GB/s." if copy else "."), "",
             "| " + " | ".join(HEADER) + " |", "|" + " --- |" * len(HEADER)]
    for task, r in report["tasks"].items():
        cells = _cells(task, r, report["gpu"])
        table.add_row(*cells)
        lines.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    return table, "\n".join(lines)


def gpu_slug(device: str) -> str:
    if device != "cuda":
        return "cpu"
    name = torch.cuda.get_device_name()
    return next((k.lower() for k in CEILINGS if k in name), "".join(c for c in name.lower() if c.isalnum()))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--tasks", nargs="*", default=None, help="task ids, space- or comma-separated")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--timeout", type=float, default=600.0, help="worker limit per verdict, seconds")
    parser.add_argument("--gpus", type=int, default=None, help="GPUs to spread the tasks over (default: all)")
    parser.add_argument("--workers", type=int, default=None,
                        help="tasks in flight (default: the judge pool's; timed sections never share a GPU)")
    parser.add_argument("--verdicts", type=int, default=1, help="distinct copies of each expert judged")
    parser.add_argument("--budget-s", type=float, default=None, help="no round of copies starts after this")
    return parser


def main(argv: list[str] | None = None) -> dict:
    args = _parser().parse_args(argv)
    began = time.monotonic()
    device = resolve_device(args.device)
    specs = [get_task(t) for item in args.tasks or [] for t in item.split(",") if t] or list_tasks()
    date = datetime.date.today().isoformat()
    out = args.out or Path("bench/results/suite") / f"tasks-{gpu_slug(device)}-{date}.json"
    config = EvalConfig(timeout_s=args.timeout, baselines=("eager", "compile"), vendor_baselines=True, seed=0)
    versions = software_versions(device)
    report = {
        **provenance(device, __spec__.name, argv), "date": date, "device": device, "versions": versions,
        "config": config.key(), "copy_bandwidth": None, "tasks": {},
    }
    console = Console(width=None if sys.stdout.isatty() else 200)
    if device == "cuda":
        report["copy_bandwidth"] = copy_bandwidth(config.iters, config.retries)
        torch.cuda.empty_cache()  # hand the probe's 2 GiB back before the judge's workers start
        console.print(f"copy bandwidth {report['copy_bandwidth']['gbps']:.0f} GB/s")
    out.parent.mkdir(parents=True, exist_ok=True)
    verdicts: dict[str, list] = {spec.id: [] for spec in specs}
    with tempfile.TemporaryDirectory() as tmp:
        evaluator = Evaluator(ResultStore(Path(tmp) / "bench.sqlite3"), config)
        for copy in range(args.verdicts):
            if copy and args.budget_s is not None and time.monotonic() - began > args.budget_s:
                break
            _judge_round(evaluator, specs, copy, device, args, verdicts, report, out, console)
        report["rounds"] = min(len(v) for v in verdicts.values())
    report["tasks"] = {spec.id: report["tasks"][spec.id] for spec in specs if spec.id in report["tasks"]}
    report["wall_s"] = time.monotonic() - began
    out.write_text(json.dumps(report, indent=1, sort_keys=True))
    table, markdown = render(report)
    console.print(table)
    print(markdown)
    print(f"\nwrote {out}")
    return report


def _judge_round(evaluator, specs: list[TaskSpec], copy: int, device: str, args, verdicts: dict, report: dict,
                 out: Path, console) -> None:
    """One copy of every expert through one ``evaluate_many`` batch; each task's row rebuilt from
    all its verdicts so far and the JSON rewritten as each verdict arrives."""

    def record(i: int, verdict) -> None:
        spec = specs[i]
        verdicts[spec.id].append(verdict)
        try:
            row = repeated_row(spec, verdicts[spec.id], device, report["copy_bandwidth"])
        except Exception:  # noqa: BLE001 - one task's failure must not stop the others
            row = {"stage": "error", "exception": traceback.format_exc(limit=6)}
        report["tasks"][spec.id] = row
        out.write_text(json.dumps(report, indent=1, sort_keys=True))
        console.print(f"{spec.id} #{copy}: {row['stage']} ({verdict.wall_s:.0f} s)", highlight=False)

    suffix = f"\n# suite copy {copy}\n" if copy else ""
    jobs = [(spec.id, solution_source(spec) + suffix) for spec in specs]
    evaluate_many(evaluator, jobs, device, workers=args.workers, use_cache=False, on_verdict=record, gpus=args.gpus)


if __name__ == "__main__":
    main()
