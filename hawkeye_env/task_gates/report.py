"""What ``hawkeye tasks generate`` records: each kept task's index entry, and the run's report.

The report (``OUT/report.json``, printed by the command) holds the time, the kept fraction, the
drop reasons with counts and a few examples each, coverage by family, variant, dtype, backward and
difficulty level (drafted and kept), the splits (tasks and distinct graphs in each) and every
dropped task with its reason.
"""

from __future__ import annotations

import platform
import statistics
from collections import Counter, defaultdict
from datetime import date

import torch

from hawkeye_env.tasks.generate.draft import TaskDraft
from hawkeye_env.tasks.spec import TaskSpec

EXAMPLES_PER_REASON = 3


def index_entry(spec: TaskSpec, draft: TaskDraft, graph_hash: str, task_hash: str, difficulty: dict) -> dict:
    """A kept task's line in the folder's index: what ``hawkeye tasks list`` shows without importing it."""
    shape = dict(spec.gpu_shapes[0])
    variant = draft.graph[0] if draft.graph else ""
    return {"id": spec.id, "module": spec.module, "family": spec.family, "variant": variant,
            "dtypes": list(spec.dtypes), "backward": draft.backward, "tags": list(spec.tags), "gpu_shape": shape,
            "gflop": round(spec.flops(**shape) / 1e9, 4), "mb": round(spec.bytes_moved(**shape) / 1e6, 3),
            "graph_hash": graph_hash, "task_hash": task_hash, "difficulty": difficulty}


def _coverage(records: list[dict], key) -> dict:
    table: dict[str, dict[str, int]] = defaultdict(lambda: {"drafted": 0, "kept": 0})
    for r in records:
        row = table[str(key(r))]
        row["drafted"] += 1
        row["kept"] += "entry" in r
    return dict(sorted(table.items()))


def _splits(entries: list[dict]) -> dict:
    out = {}
    for split in ("train", "validation", "test"):
        mine = [e for e in entries if e["split"] == split]
        out[split] = {"tasks": len(mine), "graphs": len({e["graph_hash"] for e in mine}),
                      "held_out_graph_tasks": sum(bool(e["held_out_graph"]) for e in mine)}
    return out


def summarize(config, records: list[dict], held_out: dict[str, str], wall_s: float) -> dict:
    """The run's report (module docstring)."""
    entries = [r["entry"] for r in records if "entry" in r]
    dropped = [r for r in records if "dropped" in r]
    reasons = Counter(r["dropped"]["code"] for r in dropped)
    examples = defaultdict(list)
    for r in dropped:
        if len(examples[r["dropped"]["code"]]) < EXAMPLES_PER_REASON:
            examples[r["dropped"]["code"]].append({"id": r["id"], "detail": r["dropped"]["detail"]})
    seconds = [r["seconds"] for r in records]
    levels = {r["id"]: r["entry"]["difficulty"]["level"] for r in records if "entry" in r}
    return {
        "date": date.today().isoformat(), "seed": config.seed, "n": config.n, "families": config.families,
        "backward_share": config.backward_share, "compile": config.compile, "compile_every": config.compile_every,
        "workers": config.workers,
        "versions": {"torch": torch.__version__, "python": platform.python_version(), "machine": platform.machine()},
        "wall_s": round(wall_s, 2),
        "per_task_s": {"median": statistics.median(seconds) if seconds else 0.0,
                       "p90": sorted(seconds)[int(0.9 * (len(seconds) - 1))] if seconds else 0.0,
                       "max": max(seconds, default=0.0)},
        "kept": len(entries), "kept_fraction": round(len(entries) / max(config.n, 1), 4),
        "dropped": dict(reasons.most_common()), "dropped_examples": dict(examples),
        "coverage": {"family": _coverage(records, lambda r: r["family"]),
                     "variant": _coverage(records, lambda r: f"{r['family']}/{r['variant']}"),
                     "dtype": _coverage(records, lambda r: r["dtype"]),
                     "backward": _coverage(records, lambda r: r["backward"]),
                     "level": dict(sorted(Counter(levels.values()).items()))},
        "distinct_graphs": len({e["graph_hash"] for e in entries}),
        "held_out_graphs": len(held_out), "splits": _splits(entries),
        "dropped_tasks": [{"id": r["id"], **r["dropped"]} for r in dropped],
    }
