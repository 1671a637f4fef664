"""``time_callable(hide_launch=True)``: a GPU spin sized from the host's enqueue time is queued
before every start event, and never without the flag.

CUDA is faked here (events, synchronize, ``_sleep``, device properties) so the order of the calls
and the spin's length can be checked on the CPU; ``tests/gpu/test_gpu_timing.py`` checks on a GPU
that the spin removes a host launch gap from the events.
"""

from __future__ import annotations

import time

import pytest
import torch

from hawkeye_env.judge import timing


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
        time.sleep(delay_s)  # host work before the "launch"
        return x * 2
    return fn


def test_spin_cycles_has_a_floor_and_grows_with_the_enqueue_time():
    floor = timing.spin_cycles(0.0)
    assert floor == int(timing.LAUNCH_SPIN_S * timing.SPIN_CLOCK_HZ)
    assert timing.spin_cycles(1e-5) == floor  # 10 us enqueues: the floor covers them
    long = timing.spin_cycles(0.004)
    assert long == int(timing.LAUNCH_SPIN_FACTOR * 0.004 * timing.SPIN_CLOCK_HZ) > floor


def test_hidden_launches_queue_a_spin_before_every_start_event(fake_cuda):
    iters = 5
    timing.time_callable(_slow_host(0.004), [torch.ones(8)], iters=iters, retries=0, seed=0, keep=0,
                         hide_launch=True)
    sleeps = [i for i, entry in enumerate(fake_cuda) if entry[0] == "sleep"]
    assert len(sleeps) == iters
    for i in sleeps:  # each spin is followed by the start event, then (after the call) the end event
        assert fake_cuda[i + 1] == ("record",) and fake_cuda[i + 2] == ("record",)
    cycles = {fake_cuda[i][1] for i in sleeps}
    assert len(cycles) == 1
    # 4 ms of host time per call (a little more in practice): at least 2x that in spin cycles
    assert cycles.pop() >= timing.spin_cycles(0.004)


def test_plain_timing_queues_no_spin(fake_cuda):
    timing.time_callable(_slow_host(0.0), [torch.ones(8)], iters=4, retries=0, seed=0, keep=0)
    assert not [e for e in fake_cuda if e[0] == "sleep"]
    assert sum(e == ("record",) for e in fake_cuda) == 8
