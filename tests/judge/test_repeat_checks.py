"""Repeats of a passed correctness trial, driven with synthetic trial rows (no worker, no GPU).

After a trial passes, the parent checks a call on fresh inputs (``stale_output``) and, on the last
trial, a rerun on the same inputs (``nondeterministic``). A failing repeat is a violation only on
evidence of a stale or cached answer: its output matches the answer for other inputs (the first
call's, an earlier trial's: the parent's reference or the candidate's own output there), or the
failure is structural (count, shape, dtype; on a rerun, NaN where the first call was finite). Any
other failure, an honest kernel a little over its bound included, is an incorrect verdict. Expected
dtypes are the parent's native reference's when the row has one, never the worker's. The timed
loop's kept outputs follow the same rule (``test_roofline_and_timing_checks.py``).
"""

from __future__ import annotations

import pytest
import torch

from hawkeye_env.judge.parent.decide.checks import check_trials
from hawkeye_env.judge.parent.decide.feedback import render_feedback
from hawkeye_env.judge.shared.verdict import Stage, Verdict
from hawkeye_env.tasks.registry import get_task
from reward import reward
from reward.score import REWARD_INCORRECT, REWARD_VIOLATION

GEMM = get_task("gemm_bf16")  # bf16: element bound 0.016 * (rms + |ref|), worst 10x it, rel_l2 8e-3
PLAN = [{"shape": {"M": 128, "N": 128, "K": 64}, "distribution": "normal", "order": "candidate_first"}]


def _ref(seed: int) -> torch.Tensor:
    ref = torch.randn(128, 128, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    ref[0, 0] = 0.0
    return ref


def _borderline(ref: torch.Tensor) -> torch.Tensor:
    """``ref`` in bf16 with element 0 off by 0.2, 12x its bound of ~0.016 (the worst-element cap
    is 10x); relative L2 ~2e-3."""
    out = ref.to(torch.bfloat16)
    out[0, 0] = 0.2
    return out


def _unseen(ref: torch.Tensor) -> torch.Tensor:
    """The right answer for inputs the candidate never saw: relative L2 ~1.4, matching nothing."""
    return _ref(99).to(torch.bfloat16)


def _first_answer(ref: torch.Tensor) -> torch.Tensor:
    """The answer for the first call's inputs (``_row``'s ``_ref(0)``): a cached first answer."""
    return _ref(0).to(torch.bfloat16)


def _fresh_answer(ref: torch.Tensor) -> torch.Tensor:
    """The answer for the fresh inputs (``_row``'s ``_ref(1)``), returned on the rerun."""
    return _ref(1).to(torch.bfloat16)


def _over(ref: torch.Tensor, rel: float = 0.012, seed: int = 3) -> torch.Tensor:
    """An honest answer a little off everywhere: relative L2 ~``rel`` (bf16's bound is 8e-3)."""
    noise = torch.randn(ref.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    return (ref + rel * float(ref.norm()) / float(noise.norm()) * noise).to(torch.bfloat16)


def _row(repeat: str, make) -> dict:
    """A passing trial row (inputs ``_ref(0)``, fresh inputs ``_ref(1)``) whose ``repeat``
    (``fresh`` or ``rerun``) output comes from ``make`` and whose other repeat is exact."""
    ref, fresh = _ref(0), _ref(1)
    row = {"outputs": [ref.to(torch.bfloat16)], "reference": [ref], "expected_dtypes": ["bfloat16"],
           "fresh": {"outputs": [fresh.to(torch.bfloat16)], "reference": [fresh]},
           "rerun": [ref.to(torch.bfloat16)]}
    if repeat == "fresh":
        row["fresh"]["outputs"] = [make(fresh)]
    else:
        row["rerun"] = [make(ref)]
    return row


def _check(row: dict) -> tuple[bool, Verdict]:
    v = Verdict(task=GEMM.id, device="cpu", stage=Stage.CORRECT)
    passed = check_trials(GEMM, PLAN, [row], v, "cpu")
    v.reward = reward(v)
    v.feedback = render_feedback(v)
    return passed, v


def test_the_helper_rows_pass_when_repeats_are_exact():
    row = _row("fresh", lambda r: r.to(torch.bfloat16))
    row["rerun"] = [row["outputs"][0].clone()]
    passed, v = _check(row)
    assert passed and v.stage is Stage.CORRECT and not v.violations and not v.error


@pytest.mark.parametrize(("repeat", "where"), [
    ("fresh", "fresh inputs (a repeated call"),
    ("rerun", "a rerun on the same inputs"),
])
def test_borderline_repeat_is_incorrect_not_a_violation(repeat, where):
    passed, v = _check(_row(repeat, _borderline))
    assert not passed and not v.violations
    assert v.stage is Stage.INCORRECT and v.reward == REWARD_INCORRECT
    assert v.error.startswith(f"numerically borderline: correct on the checked inputs, but on {where}")
    assert "element 0: got 0.200195, expected 0 (error 0.2" in v.error and "within 0.008" in v.error
    assert "INCORRECT" in v.feedback and "numerically borderline" in v.feedback
    assert v.trials[0]["ok"]  # the checked inputs themselves passed


@pytest.mark.parametrize("repeat", ["fresh", "rerun"])
def test_honest_repeat_a_little_over_its_bound_is_incorrect(repeat):
    """Relative L2 1.2e-2 against bf16's 8e-3 (an honest decoding kernel on one more draw):
    incorrect with its figures, never a violation."""
    passed, v = _check(_row(repeat, _over))
    assert not passed and not v.violations and v.stage is Stage.INCORRECT and v.reward == REWARD_INCORRECT
    assert v.error.startswith("numerically borderline") and "x its bound 0.008" in v.error
    if repeat == "rerun":
        assert "differs from the first call's output by relative L2 0.01" in v.error


@pytest.mark.parametrize(("repeat", "make", "code", "fragment", "label"), [
    ("fresh", _first_answer, "stale_output", "a repeated call on new inputs returned a wrong answer",
     "the first call's inputs"),
    ("rerun", _fresh_answer, "nondeterministic", "a second run on the same inputs failed", "the fresh inputs"),
])
def test_an_answer_for_other_inputs_is_a_violation(repeat, make, code, fragment, label):
    passed, v = _check(_row(repeat, make))
    assert not passed and [x.code for x in v.violations] == [code], v.error
    message = v.violations[0].message
    assert message.startswith(fragment) and f"output 0 is the answer for {label}" in message
    assert v.stage is Stage.REJECTED and v.reward == REWARD_VIOLATION


def test_the_candidates_cached_first_output_is_a_violation():
    """The fresh call returns the very tensor of the first call (a cache on the instance)."""
    row = _row("fresh", _first_answer)
    row["fresh"]["outputs"] = [row["outputs"][0]]
    passed, v = _check(row)
    assert [x.code for x in v.violations] == ["stale_output"]


def test_an_answer_for_an_earlier_trials_inputs_is_a_violation():
    """A cache across trials (a global): the last trial's fresh call returns trial 0's answer."""
    earlier = {"outputs": [_ref(7).to(torch.bfloat16)], "reference": [_ref(7)], "expected_dtypes": ["bfloat16"]}
    row = _row("fresh", lambda r: _ref(7).to(torch.bfloat16))
    v = Verdict(task=GEMM.id, device="cpu", stage=Stage.CORRECT)
    assert not check_trials(GEMM, PLAN * 2, [earlier, row], v, "cpu")
    assert [x.code for x in v.violations] == ["stale_output"]
    assert "the answer for the inputs of trial 0" in v.violations[0].message


@pytest.mark.parametrize("repeat", ["fresh", "rerun"])
def test_a_wrong_answer_that_matches_no_other_inputs_is_incorrect(repeat):
    passed, v = _check(_row(repeat, _unseen))
    assert not passed and not v.violations and v.stage is Stage.INCORRECT
    assert "matches no other inputs' answer" in v.error and "relative L2 1.4" in v.error


def test_near_constant_answers_do_not_make_an_honest_miss_stale():
    """Where the two inputs' answers nearly coincide, an honest output just over its bound is as
    near the other answer as its own: incorrect, not stale."""
    ref, fresh = 1 + 1e-3 * _ref(0), 1 + 1e-3 * _ref(1)
    row = {"outputs": [ref.to(torch.bfloat16)], "reference": [ref], "expected_dtypes": ["bfloat16"],
           "fresh": {"outputs": [_over(fresh, 0.011)], "reference": [fresh]}}
    passed, v = _check(row)
    assert not passed and not v.violations and v.stage is Stage.INCORRECT, v.violations


def test_element_bounds_met_but_relative_l2_exceeded_is_incorrect():
    """Every element within its bound, the whole tensor not, and no other inputs' answer near."""
    def drift(ref):  # every element 0.7 of its bound off: rel L2 ~1.8e-2, twice bf16's rel_l2
        rms = float(ref.pow(2).mean().sqrt())
        return (ref + 0.7 * (0.016 * rms + 0.016 * ref.abs())).to(torch.bfloat16)

    passed, v = _check(_row("fresh", drift))
    assert not passed and not v.violations and v.stage is Stage.INCORRECT
    assert "relative L2 error" in v.error and "exceeds 0.008" in v.error


def _one_nan(ref: torch.Tensor) -> torch.Tensor:
    out = ref.to(torch.bfloat16)
    out[3, 3] = float("nan")
    return out


@pytest.mark.parametrize("make", [
    lambda r: r.to(torch.bfloat16)[:64],  # wrong shape
    lambda r: r.to(torch.float32),  # wrong dtype
], ids=["shape", "dtype"])
def test_structural_repeat_failure_is_a_violation(make):
    passed, v = _check(_row("fresh", make))
    assert not passed and [x.code for x in v.violations] == ["stale_output"] and v.stage is Stage.REJECTED


def test_nan_on_fresh_inputs_is_incorrect_and_on_a_rerun_a_violation():
    """New inputs may overflow an honest kernel; the same inputs gave a finite answer before."""
    passed, v = _check(_row("fresh", _one_nan))
    assert not passed and not v.violations and "1 of 16384 elements are NaN/Inf" in v.error
    passed, v = _check(_row("rerun", _one_nan))
    assert [x.code for x in v.violations] == ["nondeterministic"]
    assert "the first call on the same inputs was finite" in v.violations[0].message


def test_missing_output_on_repeat_is_a_violation():
    row = _row("fresh", _borderline)
    row["fresh"]["outputs"] = []
    passed, v = _check(row)
    assert not passed and [x.code for x in v.violations] == ["stale_output"]
    assert "0 outputs, expected 1" in v.violations[0].message


def test_a_stale_output_beside_a_borderline_one_is_a_violation():
    """Every output of a repeat is checked: a borderline first output does not hide a stale second."""
    ref, fresh = _ref(0), _ref(1)
    row = {"outputs": [ref.to(torch.bfloat16)] * 2, "reference": [ref] * 2,
           "expected_dtypes": ["bfloat16"] * 2,
           "fresh": {"outputs": [_borderline(fresh), _first_answer(fresh)], "reference": [fresh] * 2}}
    passed, v = _check(row)
    assert not passed and [x.code for x in v.violations] == ["stale_output"] and v.stage is Stage.REJECTED


def test_expected_dtypes_come_from_the_native_reference():
    """A worker that reports a wrong expected dtype (docs/threat-model.md #19) changes nothing when the
    parent has its native reference: a float32 output of a bf16 task fails on dtype."""
    ref = _ref(0)
    row = {"outputs": [ref.to(torch.float32)], "reference": [ref], "expected_dtypes": ["float32"],
           "native": [ref.to(torch.bfloat16)]}
    passed, v = _check(row)
    assert not passed and v.stage is Stage.INCORRECT and "dtype float32 != expected bfloat16" in v.trials[0]["reason"]
    row["outputs"] = [ref.to(torch.bfloat16)]
    assert _check(row)[0]


def test_native_reference_calibrates_a_repeat():
    """A repeat as far off as the native reference itself passes (the bulk bounds are multiples
    of the native's error); without it the fixed floors make it incorrect."""
    gen = torch.Generator().manual_seed(5)
    fresh = _ref(1)
    poor = (fresh * (1 + 0.02 * torch.randn(fresh.shape, dtype=torch.float64, generator=gen))).to(torch.bfloat16)
    row = _row("fresh", lambda r: poor)
    passed, v = _check(row)
    assert not passed and not v.violations and v.stage is Stage.INCORRECT
    row["fresh"]["native"] = [poor]
    assert _check(row)[0]
