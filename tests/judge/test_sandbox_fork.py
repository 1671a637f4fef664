"""A process forked after its parent judged something can still judge (gymnasium's AsyncVectorEnv
with the default ``fork`` context does exactly this)."""

from __future__ import annotations

import multiprocessing as mp

from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.shared.verdict import Stage
from hawkeye_env.tasks.registry import get_task, solution_source

SOURCE = solution_source(get_task("vector_add_fp32"))


def _judge_in_child(queue) -> None:
    v = Evaluator(ResultStore(":memory:"), EvalConfig(seed=1)).evaluate("vector_add_fp32", SOURCE, "cpu")
    queue.put((v.stage.value, v.error))


def test_forked_child_judges_after_its_parent_started_workers():
    parent = Evaluator(ResultStore(":memory:"), EvalConfig(seed=0)).evaluate("vector_add_fp32", SOURCE, "cpu")
    assert parent.stage is Stage.CORRECT
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_judge_in_child, args=(queue,))
    child.start()
    stage, error = queue.get(timeout=120)
    child.join(30)
    assert stage == "correct", error
