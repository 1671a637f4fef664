"""The local batch backend: judge many candidates at once over this machine's lanes.

``evaluate_many`` in ``evaluator.py`` is the public entry point; this module is its local
implementation (``ray_backend.py`` is the distributed one, with the same call).

* Identical ``(task, source)`` pairs in a batch are judged once; every index gets the verdict.
* Each candidate is judged by ``Evaluator.evaluate`` in a fresh worker process, so verdicts are
  exactly those of one-by-one calls, and each is written to the store as soon as it is reached:
  nothing already judged is lost if the batch is interrupted.
* On CUDA up to ``workers`` candidates run at once (default ``WORKERS_PER_GPU`` per GPU), each
  placed on the GPU lane with the fewest candidates in flight. Compilation and correctness trials
  overlap; timed sections never share a GPU (the lane lock, ``lanes.py``). While a CUDA batch
  runs, the standby pool keeps as many processes warming per lane as the batch has candidates in
  flight there (``standby.StandbyPool.holding``).
* A worker that died without a verdict (``crash``: killed by a signal or exited, which is what a
  SIGKILL from outside or the OOM killer looks like) or never got its GPU (``lane_wait``) is judged
  once more in a fresh worker; if that fails too, its verdict is the failure with its reason. A
  crash the candidate causes every time costs one extra worker and changes nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager

from hawkeye_env.judge.parent.lanes import Lane, make_lanes
from hawkeye_env.judge.parent.launch import standby
from hawkeye_env.judge.parent.store import JUDGE_CAUSED_KEY, source_hash
from hawkeye_env.judge.shared.verdict import Failure, Stage, Verdict

# Candidates in flight per GPU. Warm verdicts spend most of their time outside the timed section
# (BENCHMARKS.md, "Verdict latency": seconds per warm verdict against about a second of timed
# iterations), so one GPU keeps several workers in compilation and correctness trials while one of
# them times. 4 fits a host of 16 cores and 128 GiB per GPU; BENCHMARKS.md, "Throughput" measures
# it (`bench.throughput`).
WORKERS_PER_GPU = 4
# Candidates in flight on the CPU interpreter (each worker runs single-threaded; see worker.py).
CPU_WORKERS = 2
# Sandbox failures a retry in a fresh worker can fix (``run_job.Outcome.failure``).
RETRYABLE_FAILURES = (Failure.CRASH, Failure.LANE_WAIT)


def failed_without_verdict(v: Verdict) -> bool:
    """True when the worker gave no reply at all for a reason a retry could fix: a freshly judged
    ``runtime_error`` with no violation, no worker profile and a retryable sandbox failure, or a
    timeout the judge's own stall caused (``stall.py``)."""
    if not v.cached and JUDGE_CAUSED_KEY in v.profile:
        return True
    return (
        not v.cached and v.stage is Stage.RUNTIME_ERROR and not v.violations
        and not any(k.startswith("worker.") for k in v.profile)
        and v.failure in RETRYABLE_FAILURES
    )


class LanePicker:
    """Hands out the lane with the fewest candidates in flight (thread-safe)."""

    def __init__(self, lanes: list[Lane]):
        if not lanes:
            raise ValueError("no lanes to judge on")
        self.lanes = lanes
        self.load = [0] * len(lanes)
        self._lock = threading.Lock()

    @contextmanager
    def take(self):
        with self._lock:
            i = min(range(len(self.lanes)), key=self.load.__getitem__)
            self.load[i] += 1
        try:
            yield self.lanes[i]
        finally:
            with self._lock:
                self.load[i] -= 1


def dedupe(jobs: list[tuple[str, str]]) -> dict[tuple[str, str], list[int]]:
    """``(task, source hash) -> indices`` in first-seen order."""
    unique: dict[tuple[str, str], list[int]] = {}
    for i, (task, source) in enumerate(jobs):
        unique.setdefault((task, source_hash(source)), []).append(i)
    return unique


def judge_batch(
    evaluator, jobs: list[tuple[str, str]], device: str, workers: int | None = None, use_cache: bool = True,
    on_verdict: Callable[[int, Verdict], None] | None = None, gpus: int | list[int] | None = None,
    lanes: list[Lane] | None = None,
) -> list[Verdict]:
    """Judge ``jobs`` on this machine; see the module docstring. ``device`` is resolved already.

    Args:
        evaluator: the ``Evaluator`` (its store receives every verdict).
        workers: candidates in flight; default ``WORKERS_PER_GPU`` x GPUs, or ``CPU_WORKERS``.
        gpus: how many visible GPUs (or which indices) to use; default all.
        lanes: explicit lanes (overrides ``gpus``; tests and benchmarks pass fresh cache folders).
    """
    lanes = lanes or make_lanes(device, gpus)
    if workers is None:
        workers = WORKERS_PER_GPU * len(lanes) if device == "cuda" else CPU_WORKERS
    picker = LanePicker(lanes)

    def judge(task: str, source: str) -> Verdict:
        try:
            with picker.take() as lane:
                verdict = evaluator.evaluate(task, source, device, use_cache, lane=lane)
            if failed_without_verdict(verdict):
                with picker.take() as lane:
                    verdict = evaluator.evaluate(task, source, device, use_cache=False, lane=lane)
            return verdict
        except Exception as exc:  # noqa: BLE001 - one candidate's failure never costs the batch
            return Verdict(task=task, device=device, stage=Stage.RUNTIME_ERROR, source_hash=source_hash(source),
                           error=f"judge_error: {type(exc).__name__}: {exc}", failure=Failure.JUDGE_ERROR)

    unique = dedupe(jobs)
    results: list[Verdict | None] = [None] * len(jobs)
    # On a GPU host a verdict waits for its processes' warm-ups, with cores to spare; on the CPU
    # interpreter the cores are the limit and standbys started ahead only compete for them.
    in_flight_per_lane = -(-min(max(1, workers), len(unique) or 1) // len(lanes)) if device == "cuda" else 1
    with standby.POOL.holding(in_flight_per_lane), \
            ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="hawkeye-judge") as pool:
        futures = {pool.submit(judge, task, jobs[idx[0]][1]): idx for (task, _), idx in unique.items()}
        for future in as_completed(futures):
            verdict = future.result()
            for i in futures[future]:
                results[i] = verdict
                if on_verdict is not None:
                    on_verdict(i, verdict)
    return results


__all__ = ["CPU_WORKERS", "WORKERS_PER_GPU", "LanePicker", "dedupe", "failed_without_verdict", "judge_batch"]
