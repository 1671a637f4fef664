"""KernelBench's back-to-back timing (``back_to_back.time_back_to_back``) with CUDA faked: untimed
warm-up calls, one event pair around each timed call, a synchronize after each, ``between``
outside the events; and the parent's checks of the times a reply carries."""

from __future__ import annotations

import time

import pytest
import torch

from hawkeye_env.judge.parent.decide import kernelbench_protocol
from hawkeye_env.judge.parent.validate import reply_check
from hawkeye_env.judge.sandboxed.common import back_to_back


@pytest.fixture
def fake_cuda(monkeypatch):
    log: list[str] = []

    class Event:
        def __init__(self, enable_timing=False):
            self.t = None

        def record(self):
            self.t = time.perf_counter()
            log.append("record")

        def elapsed_time(self, end):
            return (end.t - self.t) * 1e3

    monkeypatch.setattr(torch.cuda, "Event", Event)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a, **k: log.append("sync"))
    return log


def test_each_timed_call_sits_between_its_own_events(fake_cuda):
    calls = []

    def fn(x):
        calls.append("call")
        fake_cuda.append("call")
        time.sleep(0.002)
        return x

    times = back_to_back.time_back_to_back(fn, [torch.ones(2)], trials=4, between=lambda: fake_cuda.append("between"))
    assert len(times) == 4 and all(t >= 1.5 for t in times)  # the 2 ms call is inside every pair
    assert len(calls) == back_to_back.WARMUP + 4
    timed = fake_cuda[fake_cuda.index("sync") + 1:]  # after the warm-up's synchronize
    assert timed == ["between", "record", "call", "record", "sync"] * 4


def _plan(trials=3):
    return {"seed": 1, "iters": 5, "retries": 0, "kernelbench": {"trials": trials, "seed": 7, "shape": {"N": 4}}}


@pytest.mark.parametrize(("times", "fragment"), [
    (None, "must be 3 finite positive numbers"),
    ([0.1, 0.2], "must be 3 finite positive numbers"),
    ([0.1, 0.2, float("nan")], "must be 3 finite positive numbers"),
    ([0.1, 0.2, 0.0], "must be 3 finite positive numbers"),
    ("0.1", "must be 3 finite positive numbers"),
])
def test_kernelbench_times_must_be_the_planned_count_of_positive_numbers(times, fragment):
    cand = {"median_ms": 1.0, "attempts": 1}
    if times is not None:
        cand["kernelbench_ms"] = times
    found = reply_check._timing_problem(_plan(), {"candidate": cand})
    assert found is not None and fragment in found


def test_kernelbench_times_the_job_did_not_ask_for_are_refused():
    timing = {"candidate": {"median_ms": 1.0, "attempts": 1, "kernelbench_ms": [0.1]}}
    found = reply_check._timing_problem({"seed": 1, "iters": 5, "retries": 0}, timing)
    assert found is not None and "did not ask for" in found


def test_the_protocols_mean_is_the_mean_of_the_back_to_back_times():
    timing = {"candidate": {"median_ms": 1.0, "event_ms": [9.0, 9.0], "kernelbench_ms": [0.1, 0.2, 0.3]}}
    assert kernelbench_protocol.mean_ms(timing) == pytest.approx(0.2)
    assert kernelbench_protocol.mean_ms({"candidate": {"event_ms": [9.0]}}) is None
    assert kernelbench_protocol.mean_ms(None) is None


def test_kernelbench_eager_is_the_reference_timed_back_to_back(fake_cuda):
    """The baseline-only worker times ``KERNELBENCH_EAGER`` as the protocol times a candidate:
    the mean of the planned back-to-back calls, the call inside its events."""
    from hawkeye_env.judge.sandboxed.baseline import serve as baselines
    from hawkeye_env.tasks.registry import get_task

    calls = []

    class Slow(torch.nn.Module):
        def forward(self, x):
            calls.append(1)
            time.sleep(0.002)
            return x

    plan = {"baselines": [baselines.KERNELBENCH_EAGER], "iters": 5, "retries": 0, "seed": 1, "kernelbench_trials": 6}
    got = baselines.time_baselines(get_task("vector_add_fp32"), Slow(), [torch.ones(2)], plan)
    entry = got[baselines.KERNELBENCH_EAGER]
    assert entry["method"] == "back_to_back_mean" and entry["attempts"] == 6
    assert entry["median_ms"] >= 1.5  # the 2 ms call sits inside every event pair
    assert len(calls) == back_to_back.WARMUP + 6
    assert fake_cuda.count("record") == 12


def test_only_the_kernelbench_protocol_asks_for_its_eager_baseline():
    from hawkeye_env.judge.parent import baselines
    from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator
    from hawkeye_env.judge.parent.store import ResultStore
    from hawkeye_env.tasks.registry import get_task

    spec = get_task("gemm_bf16")
    ours = Evaluator(ResultStore(":memory:"), EvalConfig()).baseline_names(spec)
    theirs = Evaluator(ResultStore(":memory:"), EvalConfig(protocol="kernelbench")).baseline_names(spec)
    assert baselines.KERNELBENCH_EAGER not in ours
    assert theirs == ours + [baselines.KERNELBENCH_EAGER]
