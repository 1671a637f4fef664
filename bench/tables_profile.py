"""BENCHMARKS.md tables of ``python -m bench.profile_evidence``: what one profile of the env's
``PROFILE`` action costs, and the instruction evidence on every precision task's expert and on the
deliberate shortcuts."""

from __future__ import annotations

import statistics

from bench.tables import Loaded, fmt, md_table


def _span(values: list[float]) -> str:
    """``median (min-max)`` of the values present, in seconds to 0.1."""
    values = sorted(v for v in values if v is not None)
    if not values:
        return "-"
    return f"{statistics.median(values):.1f}" + (f" ({values[0]:.1f}-{values[-1]:.1f})" if len(values) > 1 else "")


def profile_cost(files: list[Loaded]) -> list[str]:
    """Per task: the uncached profile calls' wall seconds and their steps (median, min-max), each
    kernel's compile seconds, and a cached call's."""
    rows, notes = [], []
    for f in files:
        for p in f.data["profiles"]:
            calls = [c for c in p["calls"] if c["stage"] == "ok"]
            if not calls:
                rows.append([p["task"], "-", "not profiled: " + p["calls"][0]["error"][:120], *["-"] * 5])
                continue
            step = {k: _span([c["seconds"].get(k) for c in calls]) for k in ("wall", "record", "replay", "sass_s")}
            compiles = ", ".join(f"{k['name']} {fmt(k['compile_s'], '.1f')}" for k in calls[0]["kernels"])
            shape = " ".join(f"{k}={v}" for k, v in p["shape"].items())
            rows.append([p["task"], shape, f"{len(calls)}", step["wall"], step["record"], step["replay"],
                         f"{step['sass_s']}; {compiles}", fmt(p["cached_call_s"], ".3f")])
        start, end = f.data.get("load_average_start"), f.data.get("load_average_end")
        if start and end:
            notes.append(f"Host load average (1 min) {start[0]:.1f} at the start and {end[0]:.1f} at the end, "
                         f"on {f.data.get('cpus')} CPUs.")
    header = ["task", "profile shape", "uncached calls", "wall s, median (min-max)", "recording worker s", "replay s",
              "of which sm_90 cross-compile s; per kernel", "cached call s"]
    return md_table(header, rows) + ([""] + notes if notes else [])


def instruction_evidence(files: list[Loaded]) -> list[str]:
    """Per precision task and candidate: the verdict, whether the task's precision reached the tensor
    cores, the matrix instructions read, and the seconds the evidence took."""
    rows = []
    for f in files:
        for e in f.data["evidence"]:
            reached = {True: "yes", False: "**no: flagged**", None: "unknown"}[e["passed"]]
            mma = ", ".join(f"{op} x{n}" for op, n in sorted(e["mma"].items())) or "none"
            rows.append([e["task"], e["candidate"], e["stage"], reached, mma, fmt(e["evidence_s"], ".1f"),
                         fmt(e["verdict_wall_s"], ".1f")])
    return md_table(["task", "candidate", "verdict", "precision reaches the tensor cores", "matrix instructions",
                     "evidence s", "verdict wall s"], rows)


__all__ = ["instruction_evidence", "profile_cost"]
