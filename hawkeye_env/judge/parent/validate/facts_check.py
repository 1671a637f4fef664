"""The parent's check of the kernel facts and counters a replay sends (a profile, a verdict's evidence).

The replay is the judge's own process, but the candidate's kernels were compiled or ran in it, so
what it sends is bounded here before any of it reaches a verdict, a prompt or the store: a list of
at most ``MAX_KERNELS`` dicts, each with only the known fields (``FACT_FIELDS``), counts as
non-negative integers, names and instruction strings short, opcode tables small. ``checked_facts``
returns the cleaned list, or raises ``ValueError`` naming the first misfit.
"""

from __future__ import annotations

import math

from hawkeye_env.judge.shared.launch_plan import MAX_KERNELS

MAX_NAME_CHARS = 128
MAX_TABLE_ENTRIES = 64
MAX_ERROR_CHARS = 2000
# Counts and sizes of one kernel; ``compile_s`` is seconds.
INT_FIELDS = ("instructions", "spill_stores", "spill_loads", "fma", "registers", "stack_bytes",
              "static_shared_bytes", "local_bytes", "launches", "num_warps", "num_stages", "shared_bytes")
TABLE_FIELDS = ("mma", "global_loads", "global_stores", "async_copies", "tma")
FACT_FIELDS = frozenset({*INT_FIELDS, *TABLE_FIELDS, "name", "function", "ptx_mma", "compile_s", "error"})
# Nsight Compute counters of one kernel (``sandboxed/replay/nsight.py``'s ``METRICS`` keys).
COUNTER_FIELDS = ("duration_us", "achieved_occupancy_pct", "tensor_pipe_pct", "fma_pipe_pct",
                  "dram_throughput_pct", "l2_throughput_pct", "l2_hit_rate_pct")


def _count(x) -> bool:
    return type(x) is int and 0 <= x < 1 << 40


def _name(x) -> bool:
    return isinstance(x, str) and 0 < len(x) <= MAX_NAME_CHARS


def _table_problem(table) -> str | None:
    if not isinstance(table, dict) or len(table) > MAX_TABLE_ENTRIES:
        return "an instruction table is not a small dict"
    if not all(_name(k) and _count(v) for k, v in table.items()):
        return "an instruction table holds something other than names and counts"
    return None


def _kernel_problem(k) -> str | None:
    if not isinstance(k, dict) or not set(k) <= FACT_FIELDS or not _name(k.get("name")):
        return "a kernel's facts are not a dict of known fields with a name"
    for key in INT_FIELDS:
        if key in k and k[key] is not None and not _count(k[key]):
            return f"a kernel's {key} is not a count"
    for key in TABLE_FIELDS:
        if key in k and _table_problem(k[key]):
            return _table_problem(k[key])
    ptx = k.get("ptx_mma", [])
    if not isinstance(ptx, list) or len(ptx) > MAX_TABLE_ENTRIES or not all(_name(x) for x in ptx):
        return "a kernel's PTX instructions are not a short list of names"
    if "function" in k and not _name(k["function"]):
        return "a kernel's function name is not a name"
    seconds = k.get("compile_s", 0.0)
    if not (isinstance(seconds, (int, float)) and math.isfinite(seconds) and seconds >= 0):
        return "a kernel's compile time is not a time"
    if "error" in k and not isinstance(k["error"], str):
        return "a kernel's error is not text"
    return None


def checked_facts(kernels) -> list[dict]:
    """``kernels`` (a replay's facts list) with errors cut to ``MAX_ERROR_CHARS``; ``ValueError``
    when it does not fit the module docstring."""
    if not isinstance(kernels, list) or len(kernels) > MAX_KERNELS:
        raise ValueError(f"the kernel facts are not a list of at most {MAX_KERNELS} kernels")
    for k in kernels:
        problem = _kernel_problem(k)
        if problem:
            raise ValueError(problem)
    return [{**k, "error": k["error"][:MAX_ERROR_CHARS]} if "error" in k else dict(k) for k in kernels]


def checked_counters(counters) -> dict:
    """A replay's ``counters`` (``{"kernels": [...]}`` or ``{"unavailable": text}``), checked and
    bounded; ``ValueError`` when malformed."""
    if isinstance(counters, dict) and set(counters) == {"unavailable"} and isinstance(counters["unavailable"], str):
        return {"unavailable": counters["unavailable"][:MAX_ERROR_CHARS]}
    rows = counters.get("kernels") if isinstance(counters, dict) and set(counters) == {"kernels"} else None
    if not isinstance(rows, list) or len(rows) > MAX_KERNELS:
        raise ValueError("the counters are neither a list of kernels nor a reason")
    out = []
    for row in rows:
        if not isinstance(row, dict) or not set(row) <= {"name", *COUNTER_FIELDS} or not _name(row.get("name")):
            raise ValueError("a kernel's counters are not a dict of known metrics with a name")
        for key in COUNTER_FIELDS:
            x = row.get(key)
            if x is not None and not (isinstance(x, (int, float)) and math.isfinite(x) and x >= 0):
                raise ValueError(f"a kernel's {key} is not a finite non-negative number")
        out.append(dict(row))
    return {"kernels": out}


__all__ = ["COUNTER_FIELDS", "FACT_FIELDS", "checked_counters", "checked_facts"]
