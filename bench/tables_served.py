"""BENCHMARKS.md tables of the served env under load: ``python -m bench.served_load``'s JSON.

``served_load`` renders, per phase (``alone``: the well-behaved sessions only; ``attacked``: beside
the hostile clients), the well-behaved steps' latency (median, p90, max), their session wait,
verdicts lost, not the step's own or stored wrong, the judge queue's counts and the server's memory
and log; then what each hostile client's requests got.
"""

from __future__ import annotations

import math
import statistics

from bench.tables import Loaded, fmt, md_table


def percentile(values: list[float], q: float) -> float | None:
    """The nearest-rank ``q``-th percentile of ``values`` (None when empty)."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def served_load(files: list[Loaded]) -> list[str]:
    rows, hostile = [], []
    for f in files:
        plan = f.data["plan"]
        for phase, p in f.data["phases"].items():
            c, judge, server = p["clients"], p["judge"], p["server"]
            lat = c["latency_s"]
            rows.append([
                phase, f"{c['steps']} / {plan['sessions'] * plan['steps']}",
                fmt(statistics.median(lat) if lat else None), fmt(percentile(lat, 90)), fmt(max(lat, default=None)),
                fmt(max(c["session_wait_s"], default=None), ".2f"),
                str(len(c["lost"])), str(len(c["mismatched"])), f"{len(p['store']['wrong'])} of {p['store']['rows']}",
                f"{judge['judged']} / {judge['cancelled']} / {judge['refused']}", str(judge["most_in_flight"]),
                f"{fmt(server['rss_start_mib'], '.0f')} / {fmt(server['peak_mib'], '.0f')}",
                f"{server['log_errors']} / {server['log_tracebacks']}",
            ])
            for kind, outcomes in sorted(c["hostile"].items()):
                hostile.append([kind, ", ".join(f"{k}: {v}" for k, v in sorted(outcomes.items()))])
    out = md_table(["phase", "steps answered", "latency s (median)", "p90", "max", "session wait s (max)", "lost",
                    "not its own", "stored wrong", "judged / withdrawn / refused", "most judged at once",
                    "server MiB (start / peak)", "log ERROR / tracebacks"], rows)
    if hostile:
        out += ["", "What the hostile clients' requests got (attacked phase):", "",
                *md_table(["hostile client", "outcomes (count)"], hostile)]
    return out


__all__ = ["percentile", "served_load"]
