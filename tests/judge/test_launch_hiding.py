"""``time_callable`` queues a GPU spin sized from the host's enqueue time before the start event of
every timed iteration except the seed's clock checks, and never with ``hide_launch=False``.

CUDA is faked here (events, synchronize, ``_sleep``, device properties) so the order of the calls
and the spin's length can be checked on the CPU; ``tests/judge/test_timing_method.py`` checks what
the method measures against a simulated GPU, ``tests/gpu/test_gpu_timing.py`` on a real one.
"""

from __future__ import annotations

import time

import pytest
import torch

from hawkeye_env.judge.sandboxed.common import timing


class _Props:
    L2_cache_size = 1 << 16


@pytest.fixture
def fake_cuda(monkeypatch):
    log: list[tuple] = []

    class Event:
        def __init__(self, enable_timing=False):
            self.t = None

        def record(self):
            self.t = time.perf_counter()
            log.append(("record",))

        def elapsed_time(self, end):
            return (end.t - self.t) * 1e3

    monkeypatch.setattr(torch.cuda, "Event", Event)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a, **k: None)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device: _Props())
    monkeypatch.setattr(torch.cuda, "_sleep", lambda cycles: log.append(("sleep", cycles)), raising=False)
    monkeypatch.setattr(timing, "WARMUP_S", 0.0)
    return log


def _slow_host(delay_s: float):
    def fn(x):
        if delay_s:
            time.sleep(delay_s)  # host work before the "launch"
        return x * 2
    return fn


def _spun_iterations(log: list[tuple]) -> list[bool]:
    """For each timed iteration in order (a pair of records), whether a spin came before it."""
    spun, pending = [], False
    records = 0
    for entry in log:
        if entry[0] == "sleep":
            pending = True
        elif records % 2 == 0:  # a start event
            spun.append(pending)
            pending, records = False, records + 1
        else:
            records += 1
    return spun


def test_spin_cycles_has_a_floor_and_grows_with_the_enqueue_time():
    floor = timing.spin_cycles(0.0)
    assert floor == int(timing.LAUNCH_SPIN_S * timing.SPIN_CLOCK_HZ)
    assert timing.spin_cycles(1e-5) == floor  # 10 us enqueues: the floor covers them
    long = timing.spin_cycles(0.004)
    assert long == int(timing.LAUNCH_SPIN_FACTOR * 0.004 * timing.SPIN_CLOCK_HZ) > floor


@pytest.mark.parametrize("seed", [0, 1])
def test_a_spin_precedes_every_start_event_but_the_clock_checks(fake_cuda, seed):
    iters = 10
    t = timing.time_callable(_slow_host(0.0), [torch.ones(8)], iters=iters, retries=0, seed=seed, keep=0)
    assert t["method"] == "spin" and t["attempts"] == timing.TIMING_ROUNDS
    _, checks = timing.plan_iterations(iters, 0, seed, keep=0)
    expected = [i not in checks[r] for r in range(timing.TIMING_ROUNDS) for i in range(iters)]
    assert _spun_iterations(fake_cuda) == expected
    assert expected.count(False) == timing.clock_check_count(iters) * timing.TIMING_ROUNDS
    for i, entry in enumerate(fake_cuda):  # a spin is followed by the start event, then the end event
        if entry[0] == "sleep":
            assert fake_cuda[i + 1] == ("record",) and fake_cuda[i + 2] == ("record",)


def test_clock_checks_differ_across_seeds(fake_cuda):
    patterns = []
    for seed in (0, 1, 2):
        fake_cuda.clear()
        timing.time_callable(_slow_host(0.0), [torch.ones(8)], iters=20, retries=0, seed=seed, keep=0)
        patterns.append(tuple(_spun_iterations(fake_cuda)))
    assert len(set(patterns)) == 3


def test_the_spin_is_sized_from_the_warm_up_enqueue(fake_cuda):
    timing.time_callable(_slow_host(0.004), [torch.ones(8)], iters=5, retries=0, seed=0, keep=0)
    cycles = {entry[1] for entry in fake_cuda if entry[0] == "sleep"}
    assert len(cycles) == 1
    # 4 ms of host time per call (a little more in practice): at least 2x that in spin cycles
    assert cycles.pop() >= timing.spin_cycles(0.004)


def test_whole_call_timing_queues_no_spin(fake_cuda):
    t = timing.time_callable(_slow_host(0.0), [torch.ones(8)], iters=4, retries=0, seed=0, keep=0,
                             hide_launch=False)
    assert t["method"] == "whole_call"
    assert not [e for e in fake_cuda if e[0] == "sleep"]
    assert sum(e == ("record",) for e in fake_cuda) == 2 * 4 * timing.TIMING_ROUNDS
