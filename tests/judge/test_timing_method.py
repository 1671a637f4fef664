"""``time_callable``'s method against a simulated GPU: device time with the host launch kept out,
the host launch reported beside it, clock checks that catch work finishing after the end event,
rounds with a CV gate, and kept iterations the parent can replay.

CUDA is faked by ``FakeGPU``: a stream timeline in host seconds, where work queued at host time
``t`` starts at ``max(t, busy)``, an event is stamped when the stream reaches it, and
``synchronize`` sleeps until every stream is idle. The spin's floor is raised to 4 ms so that
a host stalled by a loaded machine still enqueues the call behind it. A host sleep in the forward is its host launch
time; ``gpu.launch(s)`` is a kernel of ``s`` seconds on the timed stream, ``gpu.side(s)`` one on
another stream. ``tests/gpu/test_gpu_timing.py`` checks the same claims on a GPU.
"""

from __future__ import annotations

import statistics
import time

import pytest
import torch

from hawkeye_env.judge.sandboxed.common import timing


class _Props:
    L2_cache_size = 1 << 16


class FakeGPU:
    def __init__(self):
        self.busy = 0.0  # host time at which the timed stream goes idle
        self.side_busy = 0.0  # the same for another stream
        self.after_end = 0.0  # seconds a "host thread" enqueues once the call has returned

    def launch(self, seconds: float) -> None:
        self.busy = max(time.perf_counter(), self.busy) + seconds

    def side(self, seconds: float) -> None:
        self.side_busy = max(time.perf_counter(), self.side_busy) + seconds

    def synchronize(self, *args, **kwargs) -> None:
        if self.after_end:
            self.launch(self.after_end)
            self.after_end = 0.0
        remaining = max(self.busy, self.side_busy) - time.perf_counter()
        if remaining > 0:
            time.sleep(remaining)


@pytest.fixture
def gpu(monkeypatch) -> FakeGPU:
    fake = FakeGPU()

    class Event:
        def __init__(self, enable_timing=False):
            self.t = None

        def record(self):
            self.t = max(time.perf_counter(), fake.busy)

        def elapsed_time(self, end):
            return (end.t - self.t) * 1e3

    monkeypatch.setattr(torch.cuda, "Event", Event)
    monkeypatch.setattr(torch.cuda, "synchronize", fake.synchronize)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device: _Props())
    monkeypatch.setattr(torch.cuda, "_sleep", lambda cycles: fake.launch(cycles / timing.SPIN_CLOCK_HZ),
                        raising=False)
    monkeypatch.setattr(timing, "WARMUP_S", 0.0)
    monkeypatch.setattr(timing, "LAUNCH_SPIN_S", 4e-3)  # covers host jitter on a loaded CI machine
    return fake


def _kernel(gpu: FakeGPU, host_s: float, device_s: float):
    def fn(x):
        if host_s:
            time.sleep(host_s)  # the Python wrapper and the launch
        gpu.launch(device_s)
        return x
    return fn


def _time(fn, iters=10, retries=0, seed=0, **kw) -> dict:
    return timing.time_callable(fn, [torch.ones(8)], iters=iters, retries=retries, seed=seed, keep=0, **kw)


def test_device_bound_call_is_scored_at_its_device_time(gpu):
    t = _time(_kernel(gpu, 2e-4, 2e-3))
    assert t["method"] == "spin" and t["spin_ms"] >= 4.0
    assert t["median_ms"] == pytest.approx(2.0, abs=0.02)
    assert 0.2 <= t["host_launch_ms"] < 1.0
    assert t["scored_ms"] == t["median_ms"]
    assert timing.clock_violation(t) is None
    whole = _time(_kernel(gpu, 2e-4, 2e-3), hide_launch=False)
    assert whole["method"] == "whole_call"
    assert whole["median_ms"] > t["median_ms"] + 0.15  # the launch sits inside the events


def test_host_bound_call_is_scored_at_its_device_time_and_flagged(gpu):
    t = _time(_kernel(gpu, 3e-3, 5e-4))
    assert t["median_ms"] == pytest.approx(0.5, abs=0.02)  # the spin covered the 3 ms launch
    assert t["host_launch_ms"] >= 3.0
    assert t["scored_ms"] == t["median_ms"] < t["host_launch_ms"] and t["host_bound"] is True
    assert timing.clock_violation(t) is None  # a slow host is not an escape


def test_host_interference_does_not_move_the_host_launch_reported(gpu):
    """Host time is only ever added by interference: a call that takes its own 3 ms and is slowed
    to 9 ms on two calls of three (another process on the core) reports 3 ms; the median, 9 ms, is
    beside it."""
    calls = []

    def fn(x):
        calls.append(None)
        time.sleep(3e-3 if len(calls) % 3 == 0 else 9e-3)
        gpu.launch(5e-4)
        return x

    t = _time(fn, iters=20)
    assert 3.0 <= t["host_launch_ms"] < 8.0  # never the interfered 9 ms (a loaded machine oversleeps 3 ms)
    assert t["host_launch_median_ms"] >= 9.0 > t["host_launch_ms"]
    assert t["scored_ms"] == t["median_ms"] and t["host_bound"] is True
    assert timing.clock_violation(t) is None


def test_side_stream_work_trips_the_clock_check(gpu):
    def fn(x):
        gpu.launch(5e-5)
        gpu.side(5e-3)  # the real work, on a stream the events do not see
        return x

    t = _time(fn)
    assert t["median_ms"] < 0.1  # the events were fooled ...
    assert t["check_wall_median_ms"] > 4.5
    assert "work finished after the timed stream ended" in timing.clock_violation(t)  # ... the check was not
    honest = _time(_kernel(gpu, 0.0, 5e-3))
    assert honest["median_ms"] == pytest.approx(5.0, abs=0.05)
    assert timing.clock_violation(honest) is None


def test_work_enqueued_after_the_call_returned_trips_the_clock_check(gpu):
    """A host thread that enqueues the work once the forward returned (docs/threat-model.md #4)."""
    def fn(x):
        gpu.launch(5e-5)
        gpu.after_end = 5e-3
        return x

    t = _time(fn)
    assert t["median_ms"] < 0.1
    assert timing.clock_violation(t) is not None


def test_clock_check_reports_lists_and_medians(gpu):
    t = _time(_kernel(gpu, 0.0, 1e-3), iters=20)
    checks = timing.clock_check_count(20) * timing.TIMING_ROUNDS
    assert len(t["check_event_ms"]) == len(t["check_wall_ms"]) == checks
    assert len(t["event_ms"]) == len(t["wall_ms"]) == 20 * timing.TIMING_ROUNDS - checks
    assert t["check_event_median_ms"] == statistics.median(t["check_event_ms"])
    assert t["check_wall_median_ms"] == statistics.median(t["check_wall_ms"])
    assert t["wall_median_ms"] > t["median_ms"] + 0.5  # the wall clock of a spun iteration holds the spin


def test_clock_check_count_is_a_fifth_at_least_five_at_most_half():
    assert [timing.clock_check_count(n) for n in (1, 2, 5, 10, 20, 50, 100)] == [0, 1, 2, 5, 5, 10, 20]


def test_a_noisy_round_is_redone_and_left_out(gpu):
    calls = {"n": 0}

    def fn(x):
        calls["n"] += 1
        noisy = timing.WARMUP < calls["n"] <= timing.WARMUP + 10  # the first round
        gpu.launch((5e-4 if calls["n"] % 2 else 2e-3) if noisy else 1e-3)
        return x

    t = _time(fn, iters=10, retries=2)
    assert t["attempts"] == timing.TIMING_ROUNDS + 1
    assert len(t["round_median_ms"]) == timing.TIMING_ROUNDS
    assert t["cv"] <= timing.CV_GATE
    assert t["median_ms"] == pytest.approx(1.0, abs=0.01)


def test_rounds_that_never_pass_the_gate_report_their_cv(gpu):
    calls = {"n": 0}

    def fn(x):
        calls["n"] += 1
        gpu.launch(5e-4 if calls["n"] % 2 else 2e-3)
        return x

    t = _time(fn, iters=10, retries=1)
    assert t["attempts"] == timing.TIMING_ROUNDS + 1 == len(t["round_median_ms"])
    assert t["cv"] > timing.CV_GATE
    assert t["median_ms"] == statistics.median(t["round_median_ms"])


def test_one_iteration_has_no_clock_check(gpu):
    t = _time(_kernel(gpu, 0.0, 1e-3), iters=1)
    assert t["check_wall_median_ms"] is None and t["host_launch_ms"] is None
    assert t["scored_ms"] == t["median_ms"]
    assert timing.clock_violation(t) is None


def test_clock_violation_reads_whole_call_dicts():
    assert timing.clock_violation({"median_ms": 0.2, "wall_median_ms": 1.0}) is not None
    assert timing.clock_violation({"median_ms": 0.2, "wall_median_ms": 0.26}) is None
    host_bound = {"check_wall_median_ms": 3.4, "check_event_median_ms": 3.2, "host_launch_ms": 3.1}
    assert timing.clock_violation(host_bound) is None


def test_kept_refills_count_the_refills_done(gpu, monkeypatch):
    """Each kept pair's ``kept_refills`` is the number of ``_refill`` calls before its call, and
    replaying that many refills on a generator seeded like the harness's rebuilds its inputs."""
    refill = timing.refill
    done = {"n": 0}

    def counting(inputs, generator):
        done["n"] += 1
        refill(inputs, generator)

    monkeypatch.setattr(timing, "refill", counting)
    guarded_calls = []

    def guarded(fn, xs):
        guarded_calls.append(done["n"])
        return fn(*xs)

    initial = torch.zeros(16)
    x = initial.clone()
    t = timing.time_callable(lambda a: torch.tensor(float(done["n"])), [x], iters=10, retries=2, seed=7,
                             keep=4, guarded=guarded)
    assert done["n"] == t["attempts"] * 10
    kept_at, _ = timing.plan_iterations(10, 2, seed=7, keep=4)
    assert t["kept_refills"] == [g + 1 for g in kept_at] == sorted(t["kept_refills"])
    assert [int(out) for _, out in t["kept"]] == t["kept_refills"]
    # every timed call but the clock checks is guarded, the kept ones among them
    _, checks = timing.plan_iterations(10, 2, seed=7, keep=4)
    timed = [r * 10 + i + 1 for r in range(t["attempts"]) for i in range(10) if i not in checks[r]]
    assert guarded_calls[-len(timed):] == timed and set(t["kept_refills"]) <= set(timed)
    replay, generator = initial.clone(), torch.Generator().manual_seed(7)
    replayed = 0
    for (inputs, _), refills in zip(t["kept"], t["kept_refills"]):
        while replayed < refills:
            refill([replay], generator)
            replayed += 1
        assert torch.equal(inputs[0], replay)


def test_plan_follows_the_seed_and_never_checks_a_kept_iteration():
    plans = [timing.plan_iterations(50, 2, seed, keep=2) for seed in range(5)]
    assert plans[0] == timing.plan_iterations(50, 2, 0, keep=2)
    assert len({tuple(sorted(checks[0])) for _, checks in plans}) == 5
    for kept, checks in plans:
        assert len(checks) == timing.TIMING_ROUNDS + 2 and all(len(c) == 10 for c in checks)
        assert all(g < timing.TIMING_ROUNDS * 50 for g in kept)
        assert not {g for g in kept} & {r * 50 + i for r, c in enumerate(checks) for i in c}
