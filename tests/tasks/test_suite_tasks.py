"""The frontier suite: every task's spec is well formed and its expert solution is judged CORRECT
by the evaluator under the Triton CPU interpreter (all CPU shapes x all distributions)."""

from __future__ import annotations

import inspect

import pytest

from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.shared.verdict import Stage
from hawkeye_env.tasks.registry import get_task, list_tasks, solution_source, task_module
from hawkeye_env.tasks.spec import DISTRIBUTIONS
from tests.tasks import CONFORMANCE_TASKS
from units.lib.index import list_units

SUITE = [s for s in list_tasks() if s.module.startswith("hawkeye_env.tasks.") and s.id not in CONFORMANCE_TASKS]
UNIT_TAGS = {t for u in list_units() for t in u.tags}


def test_suite_is_registered():
    assert len(SUITE) >= 9


@pytest.mark.parametrize("spec", SUITE, ids=lambda s: s.id)
def test_spec_is_well_formed(spec):
    module = task_module(spec)
    assert spec.module == module.__name__ and spec.solution and spec.description
    assert spec.cpu_shapes and spec.gpu_shapes
    assert set(spec.tags) <= UNIT_TAGS, set(spec.tags) - UNIT_TAGS
    assert set(spec.distributions) <= set(DISTRIBUTIONS)
    gpu = dict(spec.gpu_shapes[0])
    for fn in (module.get_inputs, module.get_init_inputs):  # defaults are the first GPU shape
        defaults = {k: p.default for k, p in inspect.signature(fn).parameters.items()}
        assert defaults == gpu
    for shape in spec.cpu_shapes + spec.gpu_shapes:
        assert spec.flops(**shape) > 0 and spec.bytes_moved(**shape) > 0


@pytest.mark.parametrize("task_id", [s.id for s in SUITE])
def test_expert_solution_is_correct_on_cpu(task_id):
    spec = get_task(task_id)
    verdict = Evaluator(ResultStore(":memory:"), EvalConfig(seed=0)).evaluate(task_id, solution_source(spec), "cpu")
    assert verdict.stage == Stage.CORRECT, (verdict.error, verdict.violations, verdict.trials[-1:])
