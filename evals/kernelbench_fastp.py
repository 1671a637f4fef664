"""KernelBench's scores, computed as its ``scripts/benchmark_eval_analysis.py`` computes them.

A record is one problem's sample 0: ``correct`` (bool), ``runtime_ms`` (its mean time, or None
when untimed) and ``baseline_ms`` (the PyTorch reference's time from a baseline timing JSON, or
None). Over the ``n`` records of a level:

- ``fast_p`` = (problems that are correct and whose speedup ``baseline_ms / runtime_ms`` exceeds
  ``p``) / ``n``, for p in ``FAST_P`` (KernelBench's ``score.fastp``: strictly greater, ``n``
  counts every problem, failed or missing ones included); ``fast_0`` is the correctness rate;
- ``Fast@1.2`` (Dr. Kernel / KernelGYM) is ``fast_p`` at p = 1.2;
- the geometric mean speedup over the correct problems.

A record without both times counts as not faster for every p > 0 (on CPU nothing is timed).

Baseline timing JSONs (``results/timing/<GPU>/baseline_time_torch*.json`` in a KernelBench
checkout) map ``level<L>`` to problem file names to ``{"mean", "std", "min", "max",
"num_trials", "hardware", "device"}`` in milliseconds.

    >>> records = [{"correct": True, "runtime_ms": 1.0, "baseline_ms": 2.0},
    ...            {"correct": False, "runtime_ms": None, "baseline_ms": 1.0}]
    >>> fast_p(records, 1.0), fast_p(records, 0.0)
    (0.5, 0.5)
"""

from __future__ import annotations

import json
import math
from pathlib import Path

FAST_P = (0.0, 0.5, 0.8, 1.0, 1.5, 2.0)
DR_KERNEL_P = 1.2


def speedup(record: dict) -> float | None:
    """``baseline_ms / runtime_ms`` of a correct, timed record; None otherwise."""
    if not record.get("correct") or not record.get("runtime_ms") or not record.get("baseline_ms"):
        return None
    return float(record["baseline_ms"]) / float(record["runtime_ms"])


def fast_p(records: list[dict], p: float) -> float:
    """Fraction of ``records`` that are correct and more than ``p`` times faster (module docstring)."""
    if not records:
        return 0.0
    if p == 0:
        return sum(bool(r.get("correct")) for r in records) / len(records)
    return sum((s := speedup(r)) is not None and s > p for r in records) / len(records)


def geomean_speedup(records: list[dict]) -> float | None:
    """Geometric mean speedup over the correct, timed records; None when there are none."""
    speeds = [s for r in records if (s := speedup(r)) is not None]
    return math.exp(sum(math.log(s) for s in speeds) / len(speeds)) if speeds else None


def scores(records: list[dict]) -> dict:
    """``{"n", "fast_p": {p: value}, "fast@1.2", "geomean_speedup"}`` of ``records``."""
    return {"n": len(records), "fast_p": {p: fast_p(records, p) for p in FAST_P},
            "fast@1.2": fast_p(records, DR_KERNEL_P), "geomean_speedup": geomean_speedup(records)}


def read_baseline(path: str | Path, level: int) -> dict[str, float]:
    """Problem file name to mean time (ms) at ``level`` from a KernelBench baseline timing JSON."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    entries = data.get(f"level{level}")
    if entries is None:
        raise KeyError(f"{path} has no level{level} (levels: {', '.join(sorted(data))})")
    return {name: float(entry["mean"]) for name, entry in entries.items()}


def read_kernelbench_results(path: str | Path) -> dict[int, dict]:
    """Sample 0 of each problem in KernelBench's ``runs/<run>/eval_results.json`` (problem id to
    ``{"correct", "runtime_ms"}``), as its analysis script reads it."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    out = {}
    for pid, rows in data.items():
        rows = rows if isinstance(rows, list) else [rows]
        row = next((r for r in rows if int(r.get("sample_id", 0)) == 0), None)
        if row is not None:
            runtime = float(row.get("runtime", -1.0))
            out[int(pid)] = {"correct": bool(row.get("correctness")), "runtime_ms": runtime if runtime > 0 else None}
    return out


def render_table(columns: dict[str, dict]) -> str:
    """A markdown table: one row per score, one column per ``scores`` result."""
    names = list(columns)
    lines = ["| score | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|",
             "| problems | " + " | ".join(str(columns[c]["n"]) for c in names) + " |"]
    for p in FAST_P:
        label = "fast_0 (correct)" if p == 0 else f"fast_{p:g}"
        lines.append(f"| {label} | " + " | ".join(f"{columns[c]['fast_p'][p]:.3f}" for c in names) + " |")
    lines.append("| Fast@1.2 | " + " | ".join(f"{columns[c]['fast@1.2']:.3f}" for c in names) + " |")
    geo = [columns[c]["geomean_speedup"] for c in names]
    lines.append("| geomean speedup (correct) | " + " | ".join("-" if g is None else f"{g:.2f}x" for g in geo) + " |")
    return "\n".join(lines)


__all__ = ["DR_KERNEL_P", "FAST_P", "fast_p", "geomean_speedup", "read_baseline", "read_kernelbench_results",
           "render_table", "scores", "speedup"]
