"""On a GPU: ``time_callable`` reads device time with the host launch kept out, reports the host
launch beside it, and its clock checks catch work on a side stream (docs/threat-model.md #3).

``tests/judge/test_timing_method.py`` checks the same claims against a simulated GPU on the CPU.
"""

from __future__ import annotations

import time

import pytest
import torch

from hawkeye_env.judge.sandboxed.common.timing import SPIN_CLOCK_HZ, clock_violation, time_callable

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

N = 1 << 26  # 256 MiB of fp32: a ~0.13 ms read + write on an H200, far past its 60 MB L2


def _graph_replay_ms(fn, x, replays: int = 20) -> float:
    """Median CUDA-graph replay time of ``fn(x)``: device time with no host launch at all."""
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        fn(x)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn(x)
    times = []
    for _ in range(replays):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def test_a_kernel_behind_a_host_sleep_is_timed_at_its_device_time():
    x = torch.randn(N, device="cuda")

    def slow(t):
        time.sleep(0.002)  # 2 ms of host work before the kernel
        return t * 2

    hidden = time_callable(slow, [x], iters=20, retries=1, seed=0, keep=0)
    plain = time_callable(lambda t: t * 2, [x], iters=20, retries=1, seed=0, keep=0)
    graph = _graph_replay_ms(lambda t: t * 2, x)
    assert hidden["method"] == "spin"
    assert hidden["median_ms"] == pytest.approx(plain["median_ms"], rel=0.1, abs=0.01)
    assert hidden["median_ms"] == pytest.approx(graph, rel=0.1, abs=0.01)
    assert hidden["host_launch_ms"] > 1.9
    assert hidden["scored_ms"] == hidden["median_ms"] and hidden["host_bound"]  # reported, not paid
    assert plain["scored_ms"] == plain["median_ms"] < 1.0
    assert clock_violation(hidden) is None and clock_violation(plain) is None


def test_whole_call_timing_keeps_the_host_gap():
    x = torch.randn(1 << 20, device="cuda")

    def fn(t):
        time.sleep(0.002)  # 2 ms of host work before a ~10 us kernel
        return t * 2

    whole = time_callable(fn, [x], iters=10, retries=0, seed=0, keep=0, hide_launch=False)["median_ms"]
    hidden = time_callable(fn, [x], iters=10, retries=0, seed=0, keep=0)["median_ms"]
    assert whole > 1.5
    assert hidden < 0.5


def test_a_long_kernel_on_a_side_stream_trips_the_clock_check():
    x = torch.randn(1 << 20, device="cuda")
    side = torch.cuda.Stream()
    spin = int(5e-3 * SPIN_CLOCK_HZ)  # ~5 ms of device work the timed stream never waits for

    def escaping(t):
        with torch.cuda.stream(side):
            torch.cuda._sleep(spin)
        return t * 2

    def honest(t):
        torch.cuda._sleep(spin)
        return t * 2

    escaped = time_callable(escaping, [x], iters=20, retries=0, seed=0, keep=0)
    assert escaped["median_ms"] < 1.0  # the events missed it ...
    assert clock_violation(escaped) is not None  # ... the clock checks did not
    kept_in = time_callable(honest, [x], iters=20, retries=0, seed=0, keep=0)
    assert kept_in["median_ms"] > 2.0
    assert clock_violation(kept_in) is None
