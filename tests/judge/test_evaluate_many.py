"""Batch judging: concurrent workers give the same verdicts as one-by-one calls, in input order."""

from __future__ import annotations

import sys

from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator, evaluate_many
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.shared.verdict import Stage
from hawkeye_env.tasks.registry import get_task, solution_source

GOOD = solution_source(get_task("vector_add_fp32"))
WRONG = GOOD.replace("tl.load(b_ptr", "-tl.load(b_ptr")
HACK = "import os\nclass ModelNew:\n    pass\n"


def test_mixed_batch_in_order_with_duplicates_judged_once():
    ev = Evaluator(ResultStore(":memory:"), EvalConfig(seed=0))
    assert WRONG != GOOD
    jobs = [("vector_add_fp32", s) for s in (GOOD, WRONG, HACK, GOOD)]
    seen = []
    verdicts = evaluate_many(ev, jobs, device="cpu", workers=2, on_verdict=lambda i, v: seen.append(i))
    assert [v.stage for v in verdicts] == [Stage.CORRECT, Stage.INCORRECT, Stage.REJECTED, Stage.CORRECT]
    assert verdicts[0] is verdicts[3]
    assert sorted(seen) == [0, 1, 2, 3]
    assert ev.store.count() == 3
    assert sys.modules["__main__"].__dict__.get("__name__") == "__main__"
