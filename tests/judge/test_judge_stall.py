"""A worker timeout during a stall of the judge's own process is the judge's: marked as a
``judge_error``, never stored, retried by the batch API; the same timeout without a stall is the
candidate's and stored."""

from __future__ import annotations

import threading
import time

import pytest

from hawkeye_env.judge.parent.batch.pool import failed_without_verdict
from hawkeye_env.judge.parent.decide import stall
from hawkeye_env.judge.parent.evaluator import JUDGE_ERROR, EvalConfig, Evaluator
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.shared.verdict import Stage, Verdict, Violation

TASK = "vector_add_fp32"
TIMEOUT_S = 4.0


def _hold_gil(seconds: float) -> float:
    """Hold the GIL for about ``seconds`` in one C call (``sum`` over a ``range`` never enters the
    eval loop, so no other thread runs); returns how long it held it."""
    probe = time.perf_counter()
    sum(range(100_000))
    per_item = max(time.perf_counter() - probe, 1e-6) / 100_000
    start = time.perf_counter()
    sum(range(int(seconds / per_item)))
    return time.perf_counter() - start


def test_the_monitor_records_a_held_gil() -> None:
    monitor = stall.LagMonitor(tick_s=0.02, min_stall_s=0.1)
    monitor.ensure_running()
    time.sleep(0.1)
    start = time.monotonic()
    held = _hold_gil(0.8)
    time.sleep(0.1)
    assert monitor.stalled_s(start, time.monotonic()) >= 0.8 * held - 0.05
    assert monitor.stalled_s(start - 100, start - 50) == 0.0


@pytest.mark.parametrize(("wall", "lane", "stalled", "caused"), [
    (4.1, 0.0, 0.5, True),   # ran to its timeout, the judge stalled 12% of it
    (4.1, 0.0, 0.3, False),  # a stall under STALL_FRACTION of the timeout
    (3.0, 0.0, 2.0, False),  # a failure before the timeout (a crash) is not a timeout
    (5.0, 2.0, 2.0, False),  # the lane wait does not count towards the timeout
])
def test_the_rule(wall: float, lane: float, stalled: float, caused: bool) -> None:
    profile = {"worker_wall_s": wall, "lane_wait_s": lane}
    assert stall.judge_caused_timeout(True, profile, TIMEOUT_S, stalled) is caused
    assert not stall.judge_caused_timeout(False, profile, TIMEOUT_S, stalled)


def test_the_rule_reads_a_replay_timeout() -> None:
    assert stall.judge_caused_timeout(True, {"worker_wall_s": 1.0, "replay_wall_s": 4.2}, TIMEOUT_S, 1.0)


@pytest.fixture
def ev():
    """An evaluator with a short timeout (static checks off: the hanging candidate imports time)."""
    with ResultStore(":memory:") as store:
        yield Evaluator(store, EvalConfig(timeout_s=TIMEOUT_S, static_checks=False))


@pytest.fixture
def quiet(monkeypatch) -> stall.LagMonitor:
    """A monitor not running, holding only the fake stalls a test records (a loaded machine's
    real stalls stay out)."""
    monitor = stall.LagMonitor()
    monkeypatch.setattr(stall, "MONITOR", monitor)
    return monitor


def _timed_out(ev: Evaluator, stalled_s: float, **fields) -> tuple[Verdict, dict | None]:
    """A verdict whose worker ran past its timeout, finished after a fake stall of ``stalled_s``;
    returns it and what the store then holds under its key."""
    v = Verdict(task=TASK, device="cpu", stage=Stage.RUNTIME_ERROR, source_hash="f" * 64,
                error=f"timeout: no verdict within {TIMEOUT_S:.0f} s",
                profile={"worker_wall_s": TIMEOUT_S + 0.05, "lane_wait_s": 0.0}, **fields)
    key = (TASK, v.source_hash, "cpu", {"fake": str(stalled_s)}, ev.config.key())
    start = time.monotonic() - TIMEOUT_S - 1
    if stalled_s:
        stall.MONITOR.record(start + 1, start + 1 + stalled_s)
    v = ev._finish(v, start, key, store=True)
    return v, ev.store.get_verdict(*key)


def test_a_timeout_under_a_stall_is_not_stored(ev: Evaluator, quiet) -> None:
    v, stored = _timed_out(ev, stalled_s=2.0)
    assert stored is None
    assert v.error.startswith(f"{JUDGE_ERROR}: the judge's own process stalled for 2.0 s")
    assert v.error.endswith("timeout: no verdict within 4 s")
    assert v.profile[stall.CAUSED_KEY] == pytest.approx(2.0)
    assert failed_without_verdict(v)  # the batch API judges it once more at once


def test_a_timeout_without_a_stall_is_stored(ev: Evaluator, quiet) -> None:
    v, stored = _timed_out(ev, stalled_s=0.0)
    assert stored is not None and stored["error"] == v.error == "timeout: no verdict within 4 s"
    assert stall.CAUSED_KEY not in v.profile and not failed_without_verdict(v)


def test_a_rejected_timeout_stays_the_candidates(ev: Evaluator, quiet) -> None:
    v, stored = _timed_out(ev, stalled_s=2.0, violations=[Violation("forged_reply", "x")])
    assert stored is not None and not v.error.startswith(JUDGE_ERROR)


def test_the_store_refuses_a_judge_caused_verdict_from_any_backend() -> None:
    with ResultStore(":memory:") as store:
        store.put_verdict(TASK, "a" * 64, "cpu", {}, {}, {"profile": {stall.CAUSED_KEY: 3.0}})
        assert store.get_verdict(TASK, "a" * 64, "cpu", {}, {}) is None


HANGS = """
import time

import torch
from torch import nn


class ModelNew(nn.Module):
    def forward(self, a, b):
        time.sleep(600)
"""


def test_a_real_worker_timeout_during_a_held_gil_is_judged_again(ev: Evaluator, monkeypatch) -> None:
    """End to end on CPU: a hanging candidate times out while another thread holds the GIL for
    1.5 s (a long parse); the verdict is not stored. Judged again with no stall seen (the monitor
    silenced: a loaded test machine stalls too), the same timeout is stored."""
    stall.MONITOR.ensure_running()
    holder = threading.Thread(target=lambda: (time.sleep(1.0), _hold_gil(1.5)))
    holder.start()
    first = ev.evaluate(TASK, HANGS, "cpu")
    holder.join()
    assert first.error.startswith(JUDGE_ERROR) and "timeout: no verdict within 4 s" in first.error, first.error
    monkeypatch.setattr(stall.MONITOR, "stalled_s", lambda start, end: 0.0)
    second = ev.evaluate(TASK, HANGS, "cpu")
    assert not second.cached and second.error.startswith("timeout: no verdict within 4 s"), second.error
    assert ev.evaluate(TASK, HANGS, "cpu").cached
