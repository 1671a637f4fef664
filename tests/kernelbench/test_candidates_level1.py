"""Honest Triton candidates for eleven level-1-style problems are judged correct on CPU by the
real judge, among them kernels that rely on the structure of their inputs (triangular,
symmetric, normalised); dishonest ones are not."""

from __future__ import annotations

import pytest

from hawkeye_env.judge.shared.verdict import Stage
from tests.kernelbench.conftest import HACKS, SOLUTIONS
from tests.kernelbench.judging import judge


@pytest.fixture(scope="module")
def verdicts(imported):
    _, report = imported
    return judge(report, sorted(SOLUTIONS.glob("level_1_*.py")) + sorted(HACKS.glob("level_1_*.py")))


def test_honest_candidates_are_correct(verdicts):
    honest = {name: v for name, v in verdicts.items() if name.endswith("_sample_0_kernel.py")}
    assert len(honest) >= 10
    wrong = {name: (v.stage.value, v.error, [x.code for x in v.violations]) for name, v in honest.items()
             if v.stage != Stage.CORRECT}
    assert not wrong


def test_nan_output_fails_on_a_finite_reference(verdicts):
    """KLDivLoss's reference stays finite on the file's own normalised inputs, so NaN never passes."""
    v = verdicts["level_1_problem_3_nan_output.py"]
    assert v.stage == Stage.INCORRECT and "NaN" in v.trials[-1]["reason"]


def test_torch_fallback_is_rejected(verdicts):
    v = verdicts["level_1_problem_4_torch_fallback.py"]
    assert v.stage == Stage.REJECTED and "torch_compute_op" in [x.code for x in v.violations]


def test_skipping_half_the_reduction_fails(verdicts):
    assert verdicts["level_1_problem_2_half_k.py"].stage == Stage.INCORRECT
