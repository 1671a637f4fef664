"""Judge the Triton candidates of ``solutions/`` and ``hacks/`` on the imported test problems
(CPU, Triton interpreter), two workers at once."""

from __future__ import annotations

import re
from pathlib import Path

from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator, evaluate_many
from hawkeye_env.judge.parent.store import ResultStore

NAME = re.compile(r"level_(\d+)_problem_(\d+)_")


def problem_of(path: Path) -> tuple[int, int]:
    """``(level, problem number)`` of a candidate file named ``level_<L>_problem_<N>_...``."""
    m = NAME.match(path.name)
    return int(m[1]), int(m[2])


def judge(report, paths: list[Path]) -> dict[str, object]:
    """Verdicts of the candidate files ``paths`` on their tasks, by file name."""
    jobs = [(report.by_number[problem_of(p)], p.read_text()) for p in paths]
    verdicts = evaluate_many(Evaluator(ResultStore(":memory:"), EvalConfig(seed=0)), jobs, "cpu", workers=2,
                             use_cache=False)
    return {p.name: v for p, v in zip(paths, verdicts)}
