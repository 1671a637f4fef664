"""Layout copies (``spec.LAYOUT_COPY_OPS``) are allowed torch ops: a ``.contiguous()`` that really
copies dispatches ``aten.clone``, which the op recorder must not report, while a torch op that
computes the answer is still ``torch_compute_op``. A task whose answer is a copy opts out
(``TaskSpec.answer_is_copy``)."""

from __future__ import annotations

import dataclasses

import torch

from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.sandboxed.candidate.guards import OpRecorder
from hawkeye_env.judge.shared.verdict import Stage
from hawkeye_env.tasks.registry import get_task, list_tasks, solution_source
from hawkeye_env.tasks.spec import LAYOUT_COPY_OPS

GEMM = get_task("gemm_bf16")


def _recorded(fn) -> OpRecorder:
    rec = OpRecorder()
    with rec:
        fn()
    return rec


def test_a_real_contiguous_copy_and_a_clone_are_allowed_ops():
    x = torch.randn(8, 16).t()
    rec = _recorded(lambda: (x.contiguous(), x.clone(), torch.empty(16, 8).copy_(x)))
    assert {"clone", "copy_"} <= set(rec.ops)
    assert rec.disallowed(GEMM.allowed_ops, "cpu") == {}


def test_a_computing_op_is_still_outside_the_allowed_ops():
    a, b = torch.randn(4, 4), torch.randn(4, 4)
    assert _recorded(lambda: a @ b).disallowed(GEMM.allowed_ops, "cpu") == {"mm": 1}


def test_a_task_whose_answer_is_a_copy_opts_out():
    copy_task = dataclasses.replace(GEMM, answer_is_copy=True)
    assert not LAYOUT_COPY_OPS & copy_task.allowed_ops
    assert all(LAYOUT_COPY_OPS <= t.allowed_ops for t in list_tasks())  # no task's answer is a copy


def test_a_candidate_that_copies_layouts_is_accepted():
    """The expert GEMM with its second operand made contiguous from a transposed copy (a real
    copy) and its first cloned: correct, no violation."""
    source = solution_source(GEMM)
    source = source.replace("        m, k = a.shape\n",
                            "        a = a.clone()\n        b = b.t().contiguous().t().contiguous()\n"
                            "        m, k = a.shape\n", 1)
    assert "b.t().contiguous()" in source
    v = Evaluator(ResultStore(":memory:"), EvalConfig(seed=3, timeout_s=300)).evaluate(GEMM.id, source, "cpu")
    assert v.stage is Stage.CORRECT and not v.violations, v.feedback
