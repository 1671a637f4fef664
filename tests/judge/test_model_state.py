"""ModelNew's parameters and persistent buffers all come from the reference's state dict: one of
its own that the reference lacks is a build failure that names it; a non-persistent one is fine."""

from __future__ import annotations

import pytest

from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.shared.verdict import Stage
from hawkeye_env.tasks.registry import get_task, solution_source

TASK = "vector_add_fp32"
INIT = "    def __init__(self):\n        super().__init__()\n"


@pytest.mark.parametrize(("persistent", "stage"), [(True, Stage.COMPILE_ERROR), (False, Stage.CORRECT)])
def test_an_extra_buffer_is_refused_only_when_it_would_be_loaded(persistent, stage):
    source = solution_source(get_task(TASK))
    assert INIT in source
    extra = f"        self.register_buffer('scale', torch.ones(1), persistent={persistent})\n"
    verdict = Evaluator(ResultStore(":memory:"), EvalConfig(seed=0)).evaluate(
        TASK, source.replace(INIT, INIT + extra), "cpu", use_cache=False)
    assert verdict.stage is stage, verdict.feedback
    if persistent:
        assert "the reference lacks: ['scale']" in verdict.error, verdict.error
