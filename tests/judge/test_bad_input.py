"""Malformed, broken and resource-hungry candidates: each gets the right verdict with its reason,
and none of them leaves the evaluator unable to judge the next candidate.

All candidates target ``vector_add_fp32`` (the fastest task under the interpreter) and share one
``Evaluator`` with a 10 s worker timeout, so the hanging candidate costs 10 s.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.shared.verdict import Stage, Verdict
from hawkeye_env.tasks.registry import get_task, solution_source
from reward.score import (
    REWARD_COMPILE_ERROR,
    REWARD_INCORRECT,
    REWARD_NO_SOURCE,
    REWARD_RUNTIME_ERROR,
    REWARD_VIOLATION,
)

TASK = "vector_add_fp32"
REWARDS = {
    Stage.NO_SOURCE: REWARD_NO_SOURCE,
    Stage.COMPILE_ERROR: REWARD_COMPILE_ERROR,
    Stage.RUNTIME_ERROR: REWARD_RUNTIME_ERROR,
    Stage.INCORRECT: REWARD_INCORRECT,
    Stage.REJECTED: REWARD_VIOLATION,
}

HEADER = "import torch\nimport triton\nimport triton.language as tl\nfrom torch import nn\n"

ADD_KERNEL = '''

@triton.jit
def _add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a + b, mask=mask)
'''


def _forward(body: str, kernel: str = ADD_KERNEL, init: str = "") -> str:
    """A vector-add candidate whose forward is ``body`` (8-space indented lines)."""
    return (
        HEADER + kernel + "\n\nclass ModelNew(nn.Module):\n" + init
        + "    def forward(self, a, b):\n" + body
    )


LAUNCH = (
    "        n = a.numel()\n"
    "        out = torch.empty({alloc}, dtype={dtype}, device=a.device)\n"
    "        _add_kernel[(triton.cdiv(n, 1024),)](a, b, out, n, BLOCK=1024)\n"
    "        return out\n"
)

OOB_KERNEL = '''

@triton.jit
def _add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a + b, mask=mask)
    tl.store(out_ptr + offs + (1 << 28), a + b, mask=mask)
'''


@dataclass(frozen=True)
class Bad:
    """``fragment`` must appear in the verdict's error (or violation message, or failing-trial
    reason) and in its feedback."""

    id: str
    source: str
    stage: Stage
    fragment: str


STATIC_CASES = [
    Bad("empty", "", Stage.NO_SOURCE, "empty candidate"),
    Bad("whitespace", "  \n\t\n   \r\n", Stage.NO_SOURCE, "empty candidate"),
    # Prose is NO_SOURCE by the Stage docs ("empty text, prose, or no ModelNew") and by reward v1
    # ("tied with a hack so prose never pays"). JUDGE BUG: prose that does not parse is scored as
    # a compile error (-0.8) instead.
    Bad("prose", "I think the kernel should use one program per block of 1024 elements and mask "
        "the tail.", Stage.NO_SOURCE, "ModelNew"),
    Bad("prose_one_word", "Hello", Stage.NO_SOURCE, "defines no class ModelNew"),
    Bad("syntax_error", HEADER + "\n\nclass ModelNew(nn.Module):\n    def forward(self, a, b)\n"
        "        return a\n", Stage.COMPILE_ERROR, "(line 8,"),
    Bad("no_modelnew", HEADER + "\n\nclass Model(nn.Module):\n    def forward(self, a, b):\n"
        "        return a\n", Stage.NO_SOURCE, "defines no class ModelNew"),
]

# Host code is free Python: an import that fails is the candidate's compile error, in its worker.
IMPORT_CASES = [
    Bad("import_missing_module", "import does_not_exist\n" + _forward("        return a\n"),
        Stage.COMPILE_ERROR, "No module named 'does_not_exist'"),
    Bad("import_missing_name", "from triton.language import does_not_exist\n" + _forward(
        "        return a\n"), Stage.COMPILE_ERROR, "cannot import name 'does_not_exist'"),
]

RUN_CASES = [
    Bad("constructor_raises", _forward(LAUNCH.format(alloc="(n,)", dtype="a.dtype"), init=(
        "    def __init__(self):\n        super().__init__()\n        raise ValueError(\"bad init\")\n\n"
    )), Stage.COMPILE_ERROR, "ValueError: bad init"),
    # JUDGE BUG: a constructor whose signature does not match get_init_inputs() fails before its
    # __init__ frame exists, so the worker calls it a runtime error (-0.6) not a compile error.
    Bad("constructor_wrong_signature", _forward(LAUNCH.format(alloc="(n,)", dtype="a.dtype"), init=(
        "    def __init__(self, hidden_size):\n        super().__init__()\n\n"
    )), Stage.COMPILE_ERROR, "missing 1 required positional argument: 'hidden_size'"),
    Bad("wrong_shape", _forward(LAUNCH.format(alloc="(n + 1,)", dtype="a.dtype")),
        Stage.INCORRECT, "shape (1001,) != expected (1000,)"),
    Bad("wrong_dtype", _forward(LAUNCH.format(alloc="(n,)", dtype="torch.float64")),
        Stage.INCORRECT, "dtype float64 != expected float32"),
    Bad("forward_raises", _forward("        raise RuntimeError(\"no kernel yet\")\n"),
        Stage.RUNTIME_ERROR, "RuntimeError: no kernel yet"),
]

CRASH_CASES = [
    Bad("infinite_loop", _forward("        while True:\n            pass\n"),
        Stage.RUNTIME_ERROR, "timeout: no verdict within 10 s"),
    Bad("huge_torch_allocation", _forward("        return torch.empty(1 << 40)\n"),
        Stage.RUNTIME_ERROR, "can't allocate memory"),
    Bad("huge_python_allocation", _forward("        return bytearray(1 << 36)\n"),
        Stage.RUNTIME_ERROR, "MemoryError"),
]


@pytest.fixture(scope="module")
def ev() -> Evaluator:
    return Evaluator(ResultStore(":memory:"), EvalConfig(seed=0, timeout_s=10))


def _assert_round_trip(v: Verdict) -> None:
    d = json.loads(v.to_json())
    assert d == v.to_dict()
    again = Verdict.from_dict(d)
    assert again == v
    assert again.stage is v.stage


def _assert_verdict(v: Verdict, case: Bad) -> None:
    assert v.stage is case.stage, v.feedback
    assert v.reward == REWARDS[case.stage], v.feedback
    assert not v.correct
    reasons = "\n".join(
        [v.error, *(x.message for x in v.violations), *(t["reason"] for t in v.trials if not t["ok"])]
    )
    assert case.fragment in reasons, reasons
    assert case.fragment in v.feedback, v.feedback
    _assert_round_trip(v)


def _assert_honest_correct(ev: Evaluator) -> None:
    v = ev.evaluate(TASK, solution_source(get_task(TASK)), "cpu", use_cache=False)
    assert v.stage is Stage.CORRECT, v.feedback
    assert v.reward > 0
    _assert_round_trip(v)


@pytest.mark.parametrize("case", STATIC_CASES, ids=lambda c: c.id)
def test_rejected_before_the_worker(case: Bad, ev: Evaluator) -> None:
    v = ev.evaluate(TASK, case.source, "cpu")
    _assert_verdict(v, case)
    assert v.wall_s < 1.0, "no worker should have been started"


@pytest.mark.parametrize("case", IMPORT_CASES, ids=lambda c: c.id)
def test_a_failed_import_is_a_compile_error(case: Bad, ev: Evaluator) -> None:
    _assert_verdict(ev.evaluate(TASK, case.source, "cpu"), case)


@pytest.mark.parametrize("case", CRASH_CASES, ids=lambda c: c.id)
def test_crash_and_resource_cases(case: Bad, ev: Evaluator) -> None:
    v = ev.evaluate(TASK, case.source, "cpu")
    _assert_verdict(v, case)
    assert v.compiled


def test_honest_after_crash_cases(ev: Evaluator) -> None:
    _assert_honest_correct(ev)


def test_out_of_bounds_store(ev: Evaluator) -> None:
    """A store 1 GiB past the output: whatever the interpreter does (segfault, error, garbage),
    the verdict is a failure no better than an incorrect one, and the next candidate is fine."""
    v = ev.evaluate(TASK, _forward(LAUNCH.format(alloc="(n,)", dtype="a.dtype"), kernel=OOB_KERNEL), "cpu")
    assert v.stage is not Stage.CORRECT, v.feedback
    assert not v.correct
    assert v.reward <= REWARD_INCORRECT
    assert v.feedback.startswith(f"[{TASK} on cpu] ")
    _assert_round_trip(v)
    _assert_honest_correct(ev)


@pytest.mark.parametrize("case", RUN_CASES, ids=lambda c: c.id)
def test_broken_candidates(case: Bad, ev: Evaluator) -> None:
    v = ev.evaluate(TASK, case.source, "cpu")
    _assert_verdict(v, case)


def test_evaluator_still_judges_honest_solution(ev: Evaluator) -> None:
    _assert_honest_correct(ev)


def test_nul_bytes_and_surrogates_get_verdicts() -> None:
    ev = Evaluator(ResultStore(":memory:"), EvalConfig(seed=0))
    v = ev.evaluate("vector_add_fp32", "class ModelNew:\n    x = 1\x00\n", "cpu")
    assert v.stage is Stage.COMPILE_ERROR and ("null bytes" in v.error or "unparsable" in v.error), v.error
    v = ev.evaluate("vector_add_fp32", "class ModelNew:\n    x = '\ud800'\n", "cpu")
    assert v.stage is not Stage.CORRECT and v.reward <= -0.5
