"""Stalls of the judge's own process, so a timeout they caused is never a candidate's verdict.

A worker's timeout is enforced by the parent's watch loop (``sandbox.py``): while the parent is
stalled (a thread held the GIL in a long parse, the machine was overloaded, the process was
paused) a worker's reply waits unread and the clock runs on, so the worker is timed out for the
judge's stall. ``MONITOR`` is a daemon thread that sleeps ``TICK_S`` at a time and records every
wake-up later than ``MIN_STALL_S``: while the process is stalled it cannot run either, so the
lateness of its wake-up is the stall. The evaluator asks how long the process was stalled while
a verdict was judged (``stalled_s``) and does not store a timeout when that exceeds
``STALL_FRACTION`` of the timeout (``judge_caused_timeout``): it is judged again next time.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque

from hawkeye_env.judge.parent.store import JUDGE_CAUSED_KEY

# The monitor's sleep. A wake-up is late by at most a GIL switch interval (5 ms) per busy thread
# when nothing stalls; MIN_STALL_S keeps those out of the record, so only real stalls add up.
TICK_S = 0.05
MIN_STALL_S = 0.25
# Stalls kept (oldest dropped first): far more than one verdict's span holds.
MAX_EVENTS = 4096
# A worker timed out while the judge was stalled for more than this fraction of its timeout lost
# that much of its time to the judge: its timeout is the judge's, not the candidate's.
STALL_FRACTION = 0.1
# The profile key of a verdict whose timeout was the judge's (its stall in seconds); the parent sets
# it (a worker's own profile keys are prefixed ``worker.``), and the store never keeps such a verdict.
CAUSED_KEY = JUDGE_CAUSED_KEY


class LagMonitor:
    """Records the judge process's stalls as ``(start, end)`` monotonic intervals."""

    def __init__(self, tick_s: float = TICK_S, min_stall_s: float = MIN_STALL_S):
        self.tick_s, self.min_stall_s = tick_s, min_stall_s
        self._events: deque[tuple[float, float]] = deque(maxlen=MAX_EVENTS)
        self._lock = threading.Lock()
        self._pid = 0

    def ensure_running(self) -> None:
        """Start the monitor thread in this process if it is not running (again after a fork)."""
        with self._lock:
            if self._pid == os.getpid():
                return
            self._pid = os.getpid()
            self._events.clear()
        threading.Thread(target=self._run, name="hawkeye-stall-monitor", daemon=True).start()

    def _run(self) -> None:
        pid = os.getpid()
        while self._pid == pid:
            asleep = time.monotonic()
            time.sleep(self.tick_s)
            woke = time.monotonic()
            if woke - asleep - self.tick_s > self.min_stall_s:
                self.record(asleep + self.tick_s, woke)

    def record(self, start: float, end: float) -> None:
        """Note that the process was stalled from ``start`` to ``end`` (monotonic seconds)."""
        with self._lock:
            self._events.append((start, end))

    def stalled_s(self, start: float, end: float) -> float:
        """Seconds of recorded stalls that overlap ``[start, end]``."""
        with self._lock:
            events = list(self._events)
        return sum(max(0.0, min(b, end) - max(a, start)) for a, b in events)


MONITOR = LagMonitor()


def timed_out_s(profile: dict) -> float:
    """The longest time the parent watched one of a verdict's workers, lane waits not counted
    (``sandbox.run_in_worker``'s measure for its timeout), from the parent's own profile keys."""
    worker = profile.get("worker_wall_s", 0.0) - profile.get("lane_wait_s", 0.0)
    return max(worker, profile.get("replay_wall_s", 0.0))


def judge_caused_timeout(failed: bool, profile: dict, timeout_s: float, stalled_s: float) -> bool:
    """True when a failed verdict's worker ran to its timeout (``profile``, parent-measured) while
    the judge's process was stalled for more than ``STALL_FRACTION`` of that timeout."""
    return failed and timed_out_s(profile) >= timeout_s and stalled_s > STALL_FRACTION * timeout_s


def explain(stalled_s: float, timeout_s: float) -> str:
    """The judge's words for a timeout it caused."""
    return (f"the judge's own process stalled for {stalled_s:.1f} s while the worker ran (timeout "
            f"{timeout_s:.0f} s), so the timeout is the judge's, not the candidate's; judged again next time")


__all__ = ["CAUSED_KEY", "MONITOR", "MIN_STALL_S", "STALL_FRACTION", "TICK_S", "LagMonitor", "explain",
           "judge_caused_timeout", "timed_out_s"]
