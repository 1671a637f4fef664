"""GPU-only: KernelBench's protocol on CUDA (``kernelbench_protocol.py``, ``back_to_back.py``):
its five trials judged from the trusted replay, the mean of its 100 back-to-back calls, and a
raise in its trials failing those trials alone (worker-timed judge, where candidate Python runs
per trial). The problems are the KernelBench-format test problems of ``tests/kernelbench``.

Skipped without CUDA (the reason is printed); run on the H200 and recorded in BENCHMARKS.md.
"""

from __future__ import annotations

import math

import pytest
import torch

from hawkeye_env.judge.parent import record_replay
from hawkeye_env.judge.parent.decide import kernelbench_protocol as kb
from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.parent.trial_plan import plan_trials
from hawkeye_env.judge.shared.verdict import Stage
from hawkeye_env.tasks import registry
from tests.kernelbench.test_protocol import FILES, _raising_after

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU: KernelBench's timing is CUDA events"),
]
PROTOCOL = EvalConfig(seed=0, iters=20, baselines=("eager",), protocol="kernelbench")


def _task(imported, number: int) -> str:
    return imported[1].by_number[(1, number)]


def _judge(config, task, source):
    return Evaluator(ResultStore(":memory:"), config).evaluate(task, source, "cuda", use_cache=False)


SOLUTIONS = FILES["honest_relu"].parent


@pytest.mark.parametrize("number", [1, 11])
def test_an_honest_candidate_passes_and_gets_the_mean_of_100_back_to_back_calls(imported, number):
    source = (SOLUTIONS / f"level_1_problem_{number}_sample_0_kernel.py").read_text()
    v = _judge(PROTOCOL, _task(imported, number), source)
    assert v.stage == Stage.CORRECT and v.timed, v.feedback
    assert v.versions["replay"] == "replay"
    outcome = v.protocols["kernelbench"]
    assert outcome["correct"] and outcome["trials"] == kb.TRIALS and outcome["failed"] == 0
    mean, ours = outcome["mean_ms"], v.timing["median_ms"]
    assert mean is not None and math.isfinite(mean) and mean > 0
    # the back-to-back mean holds the host launch and no flush; our median is device time
    assert 0.2 * ours < mean < 50 * ours, (mean, ours)


def test_a_raise_in_its_trials_fails_them_and_not_the_verdict(imported, monkeypatch):
    monkeypatch.setenv(record_replay.ENV_FLAG, "off")  # the worker runs candidate Python in every trial
    task = _task(imported, 1)
    own = len(plan_trials(registry.get_task(task), "cuda", 0))
    # models are built per trial, ours first, then KernelBench's five, then the timed ones: raise
    # in KernelBench's five alone
    source = _raising_after(FILES["honest_relu"].read_text(), own).replace(
        f"if len(BUILT) > {own}:", f"if {own} < len(BUILT) <= {own + kb.TRIALS}:")
    both = _judge(PROTOCOL, task, source)
    assert both.stage == Stage.CORRECT and both.timed, both.feedback
    outcome = both.protocols["kernelbench"]
    assert not outcome["correct"] and outcome["failed"] == kb.TRIALS
    assert "no kernel for this model" in outcome["reason"]
