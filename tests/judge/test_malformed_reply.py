"""A worker reply is untrusted data: anything malformed is a failed candidate, not a judge crash."""

from __future__ import annotations

import pytest
import torch

from hawkeye_env.judge import sandbox
from hawkeye_env.judge.evaluator import EvalConfig, Evaluator
from hawkeye_env.judge.store import ResultStore
from hawkeye_env.judge.verdict import Stage
from hawkeye_env.tasks.registry import get_task, solution_source

SOURCE = solution_source(get_task("vector_add_fp32"))


@pytest.mark.parametrize(
    "reply",
    [
        {"stage": "bogus"},
        {"stage": "ok", "violations": [["not_a_code", "x"]]},
        {"stage": "ok", "violations": [], "trials": [{"outputs": ["not a tensor"], "reference": [torch.ones(3)],
                                                      "expected_dtypes": ["float32"]}]},
        {"stage": "ok", "violations": [], "trials": [{"outputs": [torch.ones(3)], "reference": [torch.ones(3)],
                                                      "expected_dtypes": ["no_such_dtype"]}]},
        {"kind": "final"},
    ],
)
def test_malformed_reply_is_a_runtime_error(monkeypatch, reply):
    monkeypatch.setattr(sandbox, "run_in_worker", lambda *a, **k: sandbox.Outcome(reply))
    v = Evaluator(ResultStore(":memory:"), EvalConfig(seed=0)).evaluate("vector_add_fp32", SOURCE, "cpu")
    assert v.stage is Stage.RUNTIME_ERROR, v.feedback
    assert "malformed worker reply" in v.error
    assert v.reward <= -0.5
