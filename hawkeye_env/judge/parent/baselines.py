"""The parent's side of the baselines a candidate is timed against: which to time, the store that
caches them, and the baseline-only worker that measures the missing ones.

``measure_missing`` starts a baseline-only worker (``sandboxed/baseline/serve.py``: no candidate
code in its process) on a lane, under the GPU's timing lock, and stores what it measured; it is the
only place a baseline is ever timed, for the judge and for ``hawkeye baselines``. A candidate's
worker never times one: a process that ran candidate code could slow a baseline down and raise its
own speedups. ``store_entry`` / ``cached_entries`` cache results; vendor unavailability is cached
too, so a missing library is not retried on every verdict. ``MEASURING`` makes the verdicts of one
process have a task's missing baselines measured once, one verdict at a time (without it, the first
four candidates of a batch each compiled and timed the same baselines side by side on one GPU).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable

from hawkeye_env.judge.shared.baseline_names import JUDGE_BASELINES, KERNELBENCH_EAGER, short_reason  # noqa: F401
from hawkeye_env.tasks.spec import TaskSpec

# The baseline-only worker's entry point (``serve_baselines``), named for ``start.start_process``.
BASELINE_TARGET = "hawkeye_env.judge.sandboxed.baseline.serve:serve_baselines"
# The baseline-only worker's least time limit, whatever a candidate's is: it runs trusted code only,
# and with cold caches the linear-attention baselines (eager, torch.compile and FLA's autotuned
# kernels) take minutes (BENCHMARKS.md, "Task suite against the vendors": the baselines of DeltaNet
# and Gated DeltaNet), past a short candidate limit, which would have every verdict of those tasks
# start and lose another measurement. 300 s is EvalConfig's default candidate limit.
MEASURE_TIMEOUT_S = 300.0


class MeasuringLocks:
    """One lock per ``(task, shape, device, versions)``: held by the verdict that has the task's
    missing baselines measured (``measure_missing``), so the process's other verdicts of the task
    wait and then read them from the store. Reset in a forked child, where a lock held at fork time
    would never be released."""

    def __init__(self):
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()
        os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        self._locks, self._guard = {}, threading.Lock()

    def lock(self, task: str, shape: dict, device: str, versions: dict) -> threading.Lock:
        key = json.dumps([task, shape, device, versions], sort_keys=True)
        with self._guard:
            return self._locks.setdefault(key, threading.Lock())


MEASURING = MeasuringLocks()


def planned(spec: TaskSpec, judge: Iterable[str], vendor: bool) -> list[str]:
    """Baseline names to time for ``spec``: ``judge`` names, then the task's vendor names if
    ``vendor`` (a vendor name equal to a judge name is ignored)."""
    names = list(dict.fromkeys(judge))
    if vendor:
        names += [n for n in spec.vendor_baselines if n not in JUDGE_BASELINES and n not in names]
    return names


def measure_missing(store, spec: TaskSpec, shape: dict, device: str, versions: dict, names: list[str],
                    timing: dict, timeout_s: float, memory_limit_bytes: int, lane=None) -> tuple[dict, str]:
    """Time ``names`` for ``spec`` at ``shape`` in a fresh baseline-only worker (no candidate code
    in it, so nothing a candidate left behind can slow a baseline down and raise its speedups), on
    ``lane`` under its timing lock, and store what it measured. ``timing`` holds the ``seed``,
    ``iters`` and ``retries``. Returns ``(entries, error)``: name -> ``time_baselines`` entry, and
    the worker's failure ("" when none)."""
    from hawkeye_env.judge.parent.launch import run_job

    job = {"task": spec.id, "device": device, "shape": shape, "timing": {**timing, "baselines": list(names)}}
    if lane is not None:
        job["lane"] = lane.job_fields()
    writable: tuple[str, ...] = ()
    if lane is not None and lane.cache_dir is not None:
        os.makedirs(lane.cache_dir, exist_ok=True)
        writable = (lane.cache_dir,)  # trusted: no candidate process ever gets it writable
    outcome = run_job.run_job(BASELINE_TARGET, job, timeout_s, memory_limit_bytes, lane, writable=writable)
    if outcome.reply is None:
        return {}, f"{outcome.failure}: {outcome.detail}"
    entries = outcome.reply.get("baselines", {})
    for name, entry in entries.items():
        store_entry(store, spec.id, shape, device, versions, name, entry)
    error = outcome.reply.get("error", "")
    return entries, error if isinstance(error, str) else f"<{type(error).__name__}>"


# -- parent side: the store ----------------------------------------------------------------------


def store_entry(store, task: str, shape: dict, device: str, versions: dict, name: str, entry: dict) -> None:
    """Cache one ``time_baselines`` entry. A judge baseline's failure is never cached: it may be
    transient, and a cached absence would silently change what the reward is computed against."""
    if "unavailable" in entry:
        if name not in JUDGE_BASELINES:
            store.put_unavailable_baseline(task, shape, device, versions, name, short_reason(entry["unavailable"]))
        return
    detail = {k: entry[k] for k in ("scored_ms", "host_launch_ms", "iqr_ms", "cv", "attempts", "wall_median_ms",
                                    "method") if k in entry}
    store.put_baseline(task, shape, device, versions, name, float(entry["median_ms"]), detail)


def cached_entries(store, task: str, shape: dict, device: str, versions: dict, names: Iterable[str]) -> dict:
    """Stored entries for ``names``: measured ones (``median_ms`` and detail) and vendor
    unavailability (``{"unavailable": reason}``); names never stored are absent."""
    names = list(names)
    measured = store.get_baselines(task, shape, device, versions)
    missing = store.get_unavailable_baselines(task, shape, device, versions)
    out = {n: {"unavailable": missing[n]} for n in names if n in missing and n not in JUDGE_BASELINES}
    out.update({n: measured[n] for n in names if n in measured})
    return out
