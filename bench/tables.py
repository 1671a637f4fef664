"""Markdown tables of the judge, suite and product benchmarks, one function per results schema.

Each function takes the loaded results files of one BENCHMARKS.md area (``Loaded``: the path as
written in the area and the parsed content) and returns the table's lines, with any summary lines
below it. ``bench.benchmarks_doc`` puts them into BENCHMARKS.md; the kernel-development schemas
(units, sweeps, Nsight Compute, host launch) are in ``bench.kerneldev.tables``.

Schemas read:

* ``gpu_tests``: the text ``python -m pytest tests/gpu`` prints.
* ``calibration_rates`` and ``calibration_noise``: ``python -m bench.calibrate``'s JSON.
* ``throughput``: ``python -m bench.throughput``'s JSON.
* ``search_throughput``: ``python -m bench.search``'s JSON.
* ``tolerance_recheck``: trials re-judged after a calibration, each output's worst-element ratios.
* ``verdict_latency``: ``python -m bench.judge``'s JSON.
* ``suite``: ``python -m bench.tasks``'s JSON (several files: their tasks together).
* ``tolerances``: ``python -m bench.kerneldev.correctness_probe``'s JSON lines.
* ``suite_across_runs``: several of those JSONs: the tasks judged in more than one run.

The product's tables (best-of-N, GRPO) are in ``bench.tables_product``.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Loaded:
    """One results file: ``path`` relative to the repository, ``data`` its parsed content (a dict
    or list for JSON, a list of dicts for JSON lines, a string for text)."""

    path: str
    data: Any


def fmt(x, spec: str = ".3f") -> str:
    return "-" if x is None else format(x, spec)


def md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table; ``|`` inside a cell becomes ``/``."""
    def line(cells):
        return "| " + " | ".join(str(c).replace("|", "/") for c in cells) + " |"

    return [line(header), "|" + " --- |" * len(header), *(line(r) for r in rows)]


def spread(values: list[float], spec: str = ".3f") -> str:
    """``median (min-max)`` of ``values``; the value alone when there is one."""
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    if len(values) == 1:
        return format(values[0], spec)
    return f"{format(statistics.median(values), spec)} ({format(min(values), spec)}-{format(max(values), spec)})"


# --- judge ---------------------------------------------------------------------------------------

_SUMMARY_RE = re.compile(r"=+ (.*?) in ([\d.]+)s")


def gpu_tests(files: list[Loaded]) -> list[str]:
    """Outcome counts and each failed test of a pytest log."""
    rows = []
    notes = []
    for f in files:
        text = f.data
        summary = _SUMMARY_RE.findall(text) or re.findall(r"^(\d+ \w+(?:, \d+ \w+)*) in ([\d.]+)s", text, re.M)
        counts, seconds = summary[-1] if summary else ("no summary line", "-")
        failed = re.findall(r"^FAILED (\S+)", text, re.M)
        cut = re.search(r"\bpytest rc=(124|137)$", text, re.M)
        if cut and not summary:
            passed = re.findall(r"^\S+::\S+ PASSED", text, re.M)
            counts = f"{len(passed)} passed before its time limit"
        rows.append([f"`{f.path}`", counts, seconds, "<br>".join(f"`{t}`" for t in failed) or "-"])
        if cut:
            last = re.findall(r"^(\S+::\S+) (?:PASSED|FAILED|ERROR)", text, re.M)
            notes.append(f"`{f.path}`: the run hit its time limit" + (f" after `{last[-1]}`" if last else "")
                         + "; the tests after it did not finish in this log.")
        if "stopping after" in text:
            notes.append(f"`{f.path}`: the run stopped at its first failure (`-x`); the tests after it did not run.")
    return md_table(["log", "outcome", "seconds", "failed"], rows) + ([""] + notes if notes else [])


CALIBRATION_HACKS = (
    ("lower_precision", "lower precision rejected"),
    ("skip_rows_1pct", "1% rows zeroed rejected"),
    ("skip_elements_0.1pct", "0.1% elements zeroed rejected"),
)


def _rejected(rate: dict) -> str:
    cell = f"{rate['failed']} / {rate['trials']}"
    if "verdicts" in rate:
        cell += f" (verdicts {rate['verdicts_failed']} / {rate['verdicts']})"
    return cell


def calibration_rates(files: list[Loaded]) -> list[str]:
    """False negatives (expert and vendor trials that failed) and false positives (wrong outputs
    that passed) per task: failed / trials, and per verdict where the file counts verdicts. A task
    in a later file replaces its row of an earlier one (a rebuilt expert's own trials), and the
    ``file`` column names where each row comes from."""
    rows: dict[str, list[str]] = {}
    notes: dict[str, list[str]] = {}
    for f in files:
        name = f.path.rsplit("/", 1)[-1]
        for task, entry in f.data.get("correctness", {}).items():
            if "rates" not in entry:
                rows[task] = [task, "error", "-", "-", *("-" for _ in CALIBRATION_HACKS), name]
                continue
            rates = entry["rates"]
            vendors = ", ".join(f"{n.removeprefix('vendor:')} {_rejected(r)}" for n, r in rates.items()
                                if n.startswith("vendor:") and r["trials"])
            rows[task] = [task, str(entry["trials"]), _rejected(rates["expert"]), vendors or "-",
                          *(_rejected(rates[h]) if h in rates else "-" for h, _ in CALIBRATION_HACKS), name]
            notes[task] = [f"{task}: {n.removeprefix('vendor:')} unavailable ({why})"
                           for n, why in entry.get("vendors_unavailable", {}).items()]
    header = ["task", "trials", "expert failed / trials", "vendor failed / trials",
              *(label for _, label in CALIBRATION_HACKS), "file"]
    table = md_table(header, [rows[t] for t in sorted(rows)])
    lines = [n for t in sorted(notes) for n in notes[t]]
    return table + ([""] + lines if lines else [])


def _range(summary: dict, spec: str) -> str:
    """``median (min-max)`` of an ``bench.calibrate`` summary; ``-`` when it has no values."""
    if not summary or not summary.get("n"):
        return "-"
    return f"{fmt(summary.get('median'), spec)} ({fmt(summary.get('min'), spec)}-{fmt(summary.get('max'), spec)})"


def calibration_noise(files: list[Loaded]) -> list[str]:
    """Repeated verdicts of one expert, per concurrency: the device time the score reads and its
    max/min, the host launch beside it, the speedup as that run scored it, verdicts per minute.
    A task the run's budget left out is listed as not run."""
    rows, skipped = [], []
    for f in files:
        for task, by_k in sorted(f.data.get("noise", {}).items()):
            if "skipped" in by_k:
                skipped.append(task)
                continue
            for k, r in sorted(by_k.items()):
                if not isinstance(r, dict) or "speedup" not in r:
                    continue
                device = r.get("device_ms") or {}
                fastest = "host_launch_median_ms" in r  # from then on host_launch_ms is the fastest enqueue
                host = r.get("host_launch_ms") or {}
                rows.append([
                    task, k, str(device.get("n", 0)), _range(device, ".4f"), fmt(device.get("max_over_min"), ".3f"),
                    fmt(device.get("best_over_median"), ".3f"),
                    _range(host, ".3f") + ("" if fastest else " (median enqueue)"),
                    fmt(host.get("max_over_min"), ".2f"),
                    f"{_range(r['speedup'], '.3f')}, {fmt(r['speedup'].get('max_over_min'), '.2f')}",
                    fmt(r.get("verdicts_per_min"), ".1f"),
                ])
    header = ["task", "in flight", "verdicts", "device ms, median (min-max)", "device max/min",
              "device best / median", "host launch ms, median (min-max) over verdicts", "host max/min",
              "speedup with the host launch paid when longer, median (min-max), max/min", "verdicts / min"]
    return md_table(header, rows) + (["", f"Not run (the call's time ran out): {', '.join(skipped)}."]
                                     if skipped else [])


def _host_cells(r: dict) -> list[str]:
    """A phase's busy host cores (mean / 90th percentile of ``cores``) and CPU seconds per verdict
    (all judge processes and the parent; ``bench.host_load``), or dashes where not sampled."""
    host = r.get("host") or {}
    if host.get("busy_cores_mean") is None:
        return ["-", "-"]
    cpu = sum(host.get("cpu_s", {}).values())
    per = cpu / r["verdicts"] if r.get("verdicts") else None
    return [f"{host['busy_cores_mean']:.1f} / {host['busy_cores_p90']:.1f} of {host['cores']}", fmt(per, ".1f")]


def _startup_cpu(prof: dict) -> str:
    """The median CPU seconds of the recording worker's and the replay's start-up and job
    (``worker_process.serve_jobs``; "-" for runs before the judge reported them)."""
    cells = [f"{prof[f'{p}.cpu_setup_s']:.1f} / {prof[f'{p}.cpu_job_s']:.1f}" for p in ("worker", "replay")
             if f"{p}.cpu_setup_s" in prof and f"{p}.cpu_job_s" in prof]
    return "; ".join(cells) or "-"


def search_throughput(files: list[Loaded]) -> list[str]:
    """One row per phase of ``bench.search``: the judge's mode, candidates in flight, the
    verdicts, their stages, the phase's seconds, verdicts per minute (one GPU: per GPU-minute) from
    the phase's start and after its first verdict, the median seconds of a verdict, of waiting
    for its worker and its replay process (``Outcome.start_s``) and of each, and the host's load."""
    rows = []
    for f in files:
        asked = f.data.get("args", {}).get("phases") or []
        for i, r in enumerate(f.data["phases"]):
            schedule = r.get("cuda_schedule")
            if schedule is None:  # a skipped phase without its schedule: the one its --phases entry named
                spec = asked[i].split(":")[0] if i < len(asked) else r["mode"]
                schedule = spec.partition("+")[2] or "auto"
            mode = r["mode"] + ("" if schedule == "auto" else f" (CUDA {schedule})")
            if r.get("skipped"):
                rows.append([mode, str(r["workers"]), "not run", *["-"] * 12])
                continue
            stages = ", ".join(f"{k} {v}" for k, v in sorted(r.get("stages", {}).items())) or "-"
            prof = r.get("profile_median_s", {})
            rows.append([mode, str(r["workers"]), str(r["verdicts"]), stages, fmt(r["wall_s"], ".0f"),
                         fmt(r.get("verdicts_per_min"), ".1f"), fmt(r.get("verdicts_per_min_after_first"), ".1f"),
                         fmt(r.get("verdict_wall_s_median"), ".2f"), fmt(prof.get("worker_start_s"), ".2f"),
                         fmt(prof.get("worker_wall_s"), ".2f"), fmt(prof.get("replay_start_s"), ".2f"),
                         fmt(prof.get("replay_wall_s"), ".2f"), *_host_cells(r), _startup_cpu(prof)])
    header = ["judge", "in flight", "verdicts", "stages", "wall s", "verdicts / min (one GPU or the CPU)",
              "after the first verdict", "verdict s (median)", "waiting for the worker s", "recording worker s",
              "waiting for the replay s", "replay s", "host cores busy (mean / p90)", "CPU s per verdict",
              "CPU s of a process's start-up / job (worker; replay)"]
    return md_table(header, rows)


def tolerance_recheck(files: list[Loaded]) -> list[str]:
    """Each output of a re-judged trial: whether it passes now, its worst element against the cap
    measured on the output's RMS and on its row's (> 1 fails), and that element's values."""
    rows = []
    for f in files:
        for task, trial in sorted(f.data["trials"].items()):
            for name, r in trial["rows"].items():
                at = r["at_global_worst"]
                rows.append([task, str(trial["seed"]), name, "pass" if r["ok"] else "fail",
                             fmt(r["global_cap_over"], ".2f"), fmt(r["row_cap_over"], ".2f"),
                             f"{at['got']:.4g} / {at['ref']:.4g} / {at['native']:.4g}",
                             fmt(trial["rms"], ".1f"), fmt(at["row_rms"], ".0f")])
    header = ["task", "trial seed", "output", "verdict (row rule)", "worst / cap (output RMS)", "worst / cap (row RMS)",
              "that element: got / float64 / native", "output RMS", "its row's RMS"]
    return md_table(header, rows)


def replay_verdicts(files: list[Loaded]) -> list[str]:
    """One row per expert verdict of ``bench.replay``: the replayed device time (what the
    score reads), the replay's host launch beside it, whether the call is host-bound, and where the
    verdict's seconds went."""
    rows = []
    for f in files:
        for r in f.data["verdicts"]:
            device, host = r.get("device_ms"), r.get("host_launch_ms")
            bound = "-" if device is None or host is None else ("yes" if host > device else "no")
            rows.append([r["task"], r["stage"], fmt(device, ".4f"), fmt(host, ".4f"), bound,
                         fmt(r.get("worker_s"), ".2f"), fmt(r.get("replay_s"), ".2f"), fmt(r.get("compare_s"), ".2f")])
    header = ["task", "stage", "device ms", "replay host launch ms (median enqueue)", "host-bound",
              "recording worker s", "replay s", "compare s"]
    return md_table(header, rows)


def kernelbench_import(files: list[Loaded]) -> list[str]:
    """Per KernelBench level: files, imported, with a CPU shape, GPU only, refused, wall seconds and
    the reasons of those not imported or GPU only."""
    rows = []
    for f in files:
        for r in f.data["levels"]:
            rows.append([str(r["level"]), str(r["files"]), str(r["imported"]), str(r["cpu_shape"]), str(r["gpu_only"]),
                         str(r["refused"]), fmt(r["wall_s"], ".0f"), "<br>".join(r["reasons"]) or "-"])
    header = ["level", "files", "imported", "with a CPU shape", "GPU only", "refused", "import s", "reasons"]
    return md_table(header, rows)


def throughput(files: list[Loaded]) -> list[str]:
    """Cold and warm batches per GPU count, lone warm gemm_bf16 verdicts, and the GPU speedup."""
    rows, lines = [], []
    for f in files:
        report = f.data
        for count, run in sorted(report["runs"].items(), key=lambda kv: int(kv[0])):
            for phase in ("cold", "warm"):
                if phase in run:
                    r = run[phase]
                    rows.append([count, phase, str(r["candidates"]), fmt(r["wall_s"], ".1f"),
                                 fmt(r["candidates_per_min"], ".1f"), fmt(r["candidates_per_gpu_min"], ".1f"),
                                 fmt(r.get("gemm_wall_s_median"), ".2f"), str(len(r["unexpected"]))])
            alone = run.get("gemm_alone")
            if alone:
                rows.append([count, f"gemm_bf16 alone x{len(alone['wall_s'])}", "-", "-", "-", "-",
                             spread(alone["wall_s"], ".2f"), "-"])
        s = report.get("summary", {})
        for phase, x in s.get("speedup", {}).items():
            lo, hi = s["speedup_gpus"]
            lines.append(f"{lo} -> {hi} GPUs, {phase}: {x:.2f}x the candidates per minute.")
    header = ["GPUs", "phase", "candidates", "wall s", "candidates / min", "per GPU-minute",
              "gemm_bf16 verdict s (median)", "unexpected stages"]
    return md_table(header, rows) + ([""] + lines if lines else [])


def verdict_latency(files: list[Loaded]) -> list[str]:
    """Cold, warm and cached verdict wall time per task, and the repeated verdicts' spread."""
    rows = []
    for f in files:
        for task, t in f.data["tasks"].items():
            per_verdict = t.get("candidate_median_ms_per_verdict") or []
            speedups = ", ".join(f"{n} {s:.2f}x" for n, s in sorted(t.get("speedup", {}).items())) or "-"
            rows.append([f"`{f.path.rsplit('/', 1)[-1]}`", task, t["stage"], fmt(t.get("cold_wall_s"), ".1f"),
                         fmt(t.get("warm_wall_s_median"), ".2f"), fmt(t.get("cached_wall_s"), ".3f"),
                         ", ".join(f"{x:.3f}" for x in per_verdict) or "-",
                         fmt(t.get("verdict_to_verdict_cv")), speedups])
    header = ["file", "task", "stage", "cold s", "warm s (median)", "cached s", "candidate ms per verdict",
              "verdict-to-verdict CV", "speedup"]
    return md_table(header, rows)


# --- suite ---------------------------------------------------------------------------------------


def suite(files: list[Loaded]) -> list[str]:
    """The task suite's table as ``python -m bench.tasks`` prints it, the tasks of every file
    together (a later file's task replaces an earlier one's)."""
    from bench.tasks import render

    merged = {**files[0].data, "tasks": {}}
    for f in files:
        merged["tasks"].update(f.data["tasks"])
    merged["tasks"] = dict(sorted(merged["tasks"].items()))
    markdown = render(merged)[1].splitlines()
    table = markdown[markdown.index("") + 1:]
    bandwidth = [f"`{f.path.rsplit('/', 1)[-1]}` {f.data['copy_bandwidth']['gbps']:.0f} GB/s"
                 for f in files if f.data.get("copy_bandwidth")]
    lines = table + ([""] + ["Copy bandwidth, measured in the same call: " + ", ".join(bandwidth) + "."]
                     if bandwidth else [])
    from hawkeye_env.tasks.registry import list_tasks

    missing = [s.id for s in list_tasks() if s.id not in merged["tasks"]]
    if missing:
        lines += ["", "Tasks without a row here, not yet measured on a GPU by `bench.tasks`: "
                  + ", ".join(f"`{t}`" for t in missing) + "."]
    return lines


def tolerances(files: list[Loaded]) -> list[str]:
    """Each implementation's worst element over its bound (``max_err_ratio``; > 1 fails) and
    relative L2 per task, shape and distribution."""
    rows = []
    runners: list[str] = []
    cases = [[r for r in f.data if "kind" not in r] for f in files]  # a {"kind": "provenance"} row is not a case
    for data in cases:
        for r in data:
            runners += [k for k in r if k not in ("task", "shape", "dist", "s") and k not in runners]
    for data in cases:
        for r in data:
            shape = " ".join(f"{k}{v}" for k, v in r["shape"].items())
            cells = []
            for name in runners:
                trials = r.get(name)
                if isinstance(trials, str):
                    cells.append("unavailable")
                elif not trials:
                    cells.append("-")
                elif all(t.get("ok") for t in trials):
                    worst = max(trials, key=lambda t: t.get("max_err_ratio") or 0)
                    cells.append(f"{fmt(worst.get('max_err_ratio'), '.2f')} / {fmt(worst.get('rel_l2'), '.1e')}")
                else:
                    cells.append("**fail**: " + next(t.get("reason", "") for t in trials if not t.get("ok"))[:90])
            rows.append([r["task"], shape, r.get("dist", "-"), *cells])
    return md_table(["task", "shape", "distribution", *runners], rows)


def suite_across_runs(files: list[Loaded]) -> list[str]:
    """Tasks judged in more than one of ``files`` (each run its own fresh store, so its own baselines):
    the verdicts of all runs together, the device time's min-max and max/min over them, and each
    speedup's max/min over them (its baseline measured once per run). Exact from each run's
    ``repeats`` (min, max, count); a median of the union is not, so none is given."""
    seen: dict[str, list[dict]] = {}
    for f in files:
        for task, row in f.data["tasks"].items():
            if row.get("repeats"):
                seen.setdefault(task, []).append(row["repeats"])
    rows = []
    for task, reps in sorted(seen.items()):
        if len(reps) < 2:
            continue
        lo, hi = min(r["device_ms"]["min"] for r in reps), max(r["device_ms"]["max"] for r in reps)
        names = sorted(set.intersection(*(set(r["speedup"]) for r in reps)))
        spread = []
        for name in names:
            s_lo = min(r["speedup"][name]["min"] for r in reps)
            s_hi = max(r["speedup"][name]["max"] for r in reps)
            spread.append(f"{name} {s_hi / s_lo:.3f}")
        rows.append([task, " + ".join(str(r["n"]) for r in reps), f"{lo:.4f}-{hi:.4f}", f"{hi / lo:.3f}",
                     ", ".join(spread) or "-"])
    return md_table(["task", "verdicts (per run)", "expert device ms, min-max", "max/min",
                     "speedup max/min, per baseline"], rows)
