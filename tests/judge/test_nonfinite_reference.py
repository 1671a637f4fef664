"""A trial whose float64 reference is not finite is never scored (docs/threat-model.md #25).

``nonfinite_task/log_fp32.py`` is ``log(x)`` of inputs with negative values: its reference is NaN
in about half of the elements of every trial. A candidate that writes NaN (everywhere, or exactly
where the reference has them) matches NaN for NaN, and must not be correct: every trial row says
it was not scored, and with no trial scored the verdict is incorrect.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from hawkeye_env.judge.parent.decide.checks import NO_FINITE_REFERENCE, check_trials
from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.shared.verdict import Stage, Verdict
from hawkeye_env.tasks.registry import get_task, register_tasks_from

TASK_FOLDER = Path(__file__).resolve().parent / "nonfinite_task"

KERNEL = '''
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, {value}, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        _kernel[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
        return out
'''
CANDIDATES = {
    "log": KERNEL.format(value="tl.log(x)"),  # NaN exactly where the reference is NaN
    "all_nan": KERNEL.format(value="x * float('nan')"),
}


@pytest.fixture
def task(isolated_task_registry):
    (spec,) = register_tasks_from(TASK_FOLDER)
    return spec


@pytest.mark.parametrize("name", sorted(CANDIDATES))
def test_a_nan_writing_candidate_is_not_correct(name, task, tmp_path):
    config = EvalConfig(seed=3, timeout_s=120)
    v = Evaluator(ResultStore(tmp_path / "s.sqlite3"), config).evaluate(task.id, CANDIDATES[name], "cpu")
    assert v.stage is Stage.INCORRECT and not v.correct, v.feedback
    assert v.error == NO_FINITE_REFERENCE
    assert v.trials and all(t["scored"] is False and "not finite" in t["reason"] for t in v.trials)


def test_unscored_trials_are_skipped_and_scored_ones_still_decide():
    spec = get_task("vector_add_fp32")
    plan = [{"shape": {"N": 4}, "distribution": d, "order": "candidate_first"} for d in ("normal", "uniform")]
    nan_ref = torch.tensor([1.0, float("nan"), 2.0, 3.0], dtype=torch.float64)
    ref = torch.tensor([1.0, -1.0, 2.0, 3.0], dtype=torch.float64)
    rows = [
        {"outputs": [nan_ref.float()], "reference": [nan_ref], "native": [nan_ref.float()]},
        {"outputs": [ref.float()], "reference": [ref], "native": [ref.float()]},
    ]
    v = Verdict(task=spec.id, device="cpu", stage=Stage.CORRECT)
    assert check_trials(spec, plan, rows, v, "cpu")
    assert v.trials[0]["scored"] is False and v.trials[1]["ok"] and "scored" not in v.trials[1]
    rows[1]["outputs"] = [torch.zeros(4)]
    v = Verdict(task=spec.id, device="cpu", stage=Stage.CORRECT)
    assert not check_trials(spec, plan, rows, v, "cpu") and v.stage is Stage.INCORRECT
