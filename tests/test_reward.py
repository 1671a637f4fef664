"""Invariants of the reward (``reward/score.py``: the table they protect and what each version changed)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hawkeye_env.judge.shared.verdict import VIOLATION_CODES, Stage, Verdict, Violation
from reward import REWARD_VERSION, REWARDS, reward
from reward import score as v1
from reward.score import reward_sol_v1, reward_v1, reward_v2, reward_v4

FAILURE_STAGES = [s for s in Stage if s != Stage.CORRECT]
BASELINES = ["eager", "compile", "vendor"]

any_float = st.floats(allow_nan=True, allow_infinity=True)
edge_speedups = st.sampled_from(
    [1e-300, 1e-12, 1e-6, 0.5, 1.0, 2.0, 1e6, 1e12, 1e300, math.inf, -math.inf, math.nan, 0.0, -1.0]
)
speedup_values = st.one_of(any_float, edge_speedups)
speedup_dicts = st.dictionaries(st.sampled_from(BASELINES), speedup_values, max_size=3)
violations = st.lists(
    st.builds(
        Violation, code=st.sampled_from(sorted(VIOLATION_CODES)), message=st.text(max_size=5)
    ),
    min_size=1,
    max_size=3,
)


def make(stage: Stage, *, speedup=None, timed=None, violations=()) -> Verdict:
    speedup = dict(speedup or {})
    return Verdict(
        task="t",
        device="d",
        stage=stage,
        correct=stage == Stage.CORRECT,
        timed=bool(speedup) if timed is None else timed,
        speedup=speedup,
        violations=list(violations),
    )


@st.composite
def any_verdict(draw) -> Verdict:
    stage = draw(st.sampled_from(list(Stage)))
    return make(
        stage,
        speedup=draw(speedup_dicts),
        timed=draw(st.booleans()),
        violations=draw(st.one_of(st.just([]), violations)),
    )


@st.composite
def violating_verdict(draw) -> Verdict:
    v = draw(any_verdict())
    if not v.violations and v.stage != Stage.REJECTED:
        v.violations = draw(violations)
    return v


@st.composite
def failing_verdict(draw) -> Verdict:
    """Anything that is not a clean CORRECT: a failing stage, or a violation on any stage."""
    v = draw(any_verdict())
    if v.stage == Stage.CORRECT and not v.violations:
        v.violations = draw(violations)
    return v


@st.composite
def correct_verdict(draw) -> Verdict:
    """A clean CORRECT verdict, timed or not, with any (even broken) speedups."""
    return make(Stage.CORRECT, speedup=draw(speedup_dicts), timed=draw(st.booleans()))


good_speedup = st.floats(min_value=1e-300, max_value=1e300, allow_nan=False, allow_infinity=False)


def timed(s: float) -> Verdict:
    return make(Stage.CORRECT, speedup={"eager": s * 3.0 if s < 1e300 else s, "compile": s})


# ---- pinned values --------------------------------------------------------------------------


def test_version() -> None:
    assert REWARD_VERSION == "v4" and REWARDS[REWARD_VERSION] is reward is reward_v4


def test_v2_pays_an_imprecise_measurement_as_untimed_and_is_v1_otherwise() -> None:
    """v2 changes the input (scored device time) and refuses a measurement that missed the
    timer's precision; on every other verdict it equals v1."""
    lucky = timed(3.0)
    lucky.timing = {"precise": False}
    assert reward_v2(lucky) == v1.REWARD_CORRECT < reward_v1(lucky)
    lucky.timing = {"precise": True}
    assert reward_v2(lucky) == reward_v1(lucky) > v1.REWARD_CORRECT
    for stage in Stage:
        assert reward_v2(make(stage)) == reward_v1(make(stage))


def test_pinned_values() -> None:
    assert reward(make(Stage.REJECTED)) == -1.0
    assert reward(make(Stage.NO_SOURCE)) == -1.0
    assert reward(make(Stage.COMPILE_ERROR)) == -0.5
    assert reward(make(Stage.RUNTIME_ERROR)) == -0.5
    assert reward(make(Stage.INCORRECT)) == -0.5
    assert reward(make(Stage.CORRECT)) == 0.2
    assert reward(make(Stage.CORRECT, speedup={"eager": 1.0})) == 0.6
    assert reward(make(Stage.CORRECT, speedup={"eager": 3.0})) == pytest.approx(0.8, abs=1e-15)
    assert reward(make(Stage.CORRECT, speedup={"eager": 1 / 3})) == pytest.approx(0.4, abs=1e-15)
    # best_speedup is the minimum over baselines: parity with the fastest baseline.
    assert reward(make(Stage.CORRECT, speedup={"eager": 4.0, "compile": 1.0})) == 0.6


@pytest.mark.parametrize("s", [1e-6, 0.1, 0.5, 1.0, 2.0, 7.5, 100.0, 1e6])
def test_matches_documented_formula(s: float) -> None:
    assert reward(timed(s)) == pytest.approx(0.2 + 0.8 * s / (1 + s), rel=1e-14, abs=1e-15)


@pytest.mark.parametrize("s", [math.nan, math.inf, -math.inf, 0.0, -0.0, -2.0])
def test_bad_speedup_scores_as_untimed(s: float) -> None:
    assert reward(make(Stage.CORRECT, speedup={"eager": s})) == 0.2
    # a bad value anywhere counts, whatever the dict order
    assert reward(make(Stage.CORRECT, speedup={"eager": 2.0, "compile": s})) == 0.2
    assert reward(make(Stage.CORRECT, speedup={"compile": s, "eager": 2.0})) == 0.2


def test_timed_flag_without_speedups_is_untimed() -> None:
    assert reward(make(Stage.CORRECT, speedup={}, timed=True)) == 0.2
    assert reward(make(Stage.CORRECT, speedup={"eager": 5.0}, timed=False)) == 0.2


def test_verdict_roundtrip_keeps_reward() -> None:
    v = make(Stage.CORRECT, speedup={"eager": 2.5})
    assert reward(Verdict.from_dict(v.to_dict())) == reward(v)


# ---- invariants -----------------------------------------------------------------------------


@given(violating_verdict())
def test_violation_never_beats_compile_error(v: Verdict) -> None:
    assert reward(v) <= reward(make(Stage.COMPILE_ERROR))
    assert reward(v) == -1.0


@given(violations, speedup_dicts)
def test_violation_on_correct_stage_is_minus_one(vs: list[Violation], sp: dict) -> None:
    assert reward(make(Stage.CORRECT, speedup=sp, violations=vs)) == -1.0
    assert reward(make(Stage.CORRECT, speedup={"eager": 1e12}, violations=vs)) == -1.0


@given(correct_verdict(), failing_verdict())
def test_every_correct_beats_every_failure(good: Verdict, bad: Verdict) -> None:
    assert reward(good) > reward(bad)


@given(failing_verdict())
def test_untimed_correct_beats_every_failure(bad: Verdict) -> None:
    assert reward(make(Stage.CORRECT)) > reward(bad)
    assert reward(make(Stage.CORRECT, speedup={"eager": 3.0}, timed=False)) > reward(bad)


@given(any_verdict())
def test_bounded_and_finite(v: Verdict) -> None:
    r = reward(v)
    assert isinstance(r, float)
    assert math.isfinite(r)
    assert -1.0 <= r <= 1.0


@pytest.mark.parametrize("s", [1e-300, 1e-12, 1e12, 1e300, math.inf, math.nan])
def test_extreme_speedups_bounded(s: float) -> None:
    r = reward(make(Stage.CORRECT, speedup={"eager": s}))
    assert math.isfinite(r) and 0.2 <= r <= 1.0


@given(good_speedup)
def test_timed_in_correct_band(s: float) -> None:
    r = reward(timed(s))
    assert 0.2 <= r <= 1.0
    if 1e-12 <= s <= 1e12:
        assert 0.2 < r < 1.0  # open interval wherever floats can resolve it


@given(good_speedup, good_speedup)
def test_monotone_over_all_floats(a: float, b: float) -> None:
    lo, hi = sorted((a, b))
    assert reward(timed(lo)) <= reward(timed(hi))


@given(
    st.floats(min_value=1e-6, max_value=1e6),
    st.floats(min_value=1e-6, max_value=1e6),
)
def test_strictly_increasing_with_speedup(s: float, factor: float) -> None:
    # Strictness needs the gap to exceed float resolution: 1e-6 relative is ample on [1e-6, 1e6].
    s2 = s * (1.0 + factor)
    assert reward(timed(s)) < reward(timed(s2))


@given(good_speedup)
def test_speedup_reward_helper_agrees(s: float) -> None:
    assert v1.speedup_reward(s) == reward(make(Stage.CORRECT, speedup={"vendor": s}))


def test_stage_ordering() -> None:
    """No source < every other failure (all alike, so a hack caught by wrong outputs or a dead
    worker never outscores a compile error) < correct."""
    failures = [Stage.COMPILE_ERROR, Stage.RUNTIME_ERROR, Stage.INCORRECT]
    assert len({reward(make(s)) for s in failures}) == 1
    assert reward(make(Stage.NO_SOURCE)) < reward(make(Stage.COMPILE_ERROR)) < reward(make(Stage.CORRECT))


def test_the_reward_s_stage_names_are_the_judge_s():
    """``reward`` names the stages itself (it imports nothing of the judge): the same names."""
    from hawkeye_env.judge.shared.verdict import Stage

    names = {v1.REJECTED, v1.NO_SOURCE, v1.COMPILE_ERROR, v1.RUNTIME_ERROR, v1.INCORRECT, v1.CORRECT}
    assert names == {s.value for s in Stage}
    assert set(v1.FAILURE_REWARD) == names - {v1.CORRECT}


def test_v3_is_v2s_function_under_its_own_version() -> None:
    """v3 changes what the speedup is measured from (device time alone), not the table."""
    assert REWARDS["v3"] is REWARDS["v2"] is reward_v2
    assert list(REWARDS) == ["v1", "v2", "v3", "v4", "sol-v1"]


def test_v4_pays_a_kernel_the_cpu_cannot_check_nothing_and_is_v3_otherwise() -> None:
    """A runtime error whose failure is ``not_checkable_on_cpu`` pays 0.0 under v4 (no penalty,
    below every correct kernel) and -0.5 under v3; with a violation it is still -1.0; every other
    failure kind, and every other verdict, pays what v3 pays."""
    from hawkeye_env.judge.shared.verdict import Failure

    v = make(Stage.RUNTIME_ERROR)
    v.failure = Failure.NOT_CHECKABLE_ON_CPU
    assert reward_v4(v) == 0.0 and REWARDS["v3"](v) == -0.5
    assert reward_v4(v) < reward_v4(make(Stage.CORRECT))
    v.violations = [Violation("forged_reply", "x")]
    assert reward_v4(v) == -1.0
    for failure in Failure:
        if failure is not Failure.NOT_CHECKABLE_ON_CPU:
            w = make(Stage.RUNTIME_ERROR)
            w.failure = failure
            assert reward_v4(w) == -0.5
    for stage in Stage:  # the failure kind counts only on a runtime error
        w = make(stage)
        w.failure = Failure.NOT_CHECKABLE_ON_CPU
        assert reward_v4(w) == (0.0 if stage is Stage.RUNTIME_ERROR else REWARDS["v3"](w))


def test_a_verdict_keeps_its_failure_kind_through_a_dict():
    from hawkeye_env.judge.shared.verdict import Failure

    v = make(Stage.RUNTIME_ERROR)
    v.failure = Failure.NOT_CHECKABLE_ON_CPU
    d = v.to_dict()
    assert d["failure"] == "not_checkable_on_cpu" and Verdict.from_dict(d).failure is Failure.NOT_CHECKABLE_ON_CPU
    del d["failure"]  # a verdict stored before the field existed
    assert Verdict.from_dict(d).failure is Failure.NONE


# ---- sol-v1: the speed-of-light reward -------------------------------------------------------


def at_light(f, *, passed=None, precise=True) -> Verdict:
    """A clean timed verdict at parity with its baselines whose time is ``f`` of the speed of light."""
    v = timed(1.0)
    v.timing = {"precise": precise, "sol_fraction": f}
    if passed is not None:
        v.instructions = {"required": ["E4M3", "E5M2"], "passed": passed}
    return v


sol_fractions = st.floats(min_value=1e-9, max_value=1.0, allow_nan=False)


def test_sol_v1_pays_the_fraction_of_the_speed_of_light():
    assert REWARDS["sol-v1"] is reward_sol_v1 and REWARD_VERSION == "v4"  # beside v4, not after it
    assert reward_sol_v1(at_light(0.5)) == pytest.approx(0.6)
    assert reward_sol_v1(at_light(0.25)) == pytest.approx(0.4)
    assert reward_sol_v1(at_light(1.0)) == 1.0
    assert reward_sol_v1(at_light(3.0)) == 1.0  # under the speed of light but over the floor: capped


@pytest.mark.parametrize("f", [math.nan, math.inf, -math.inf, 0.0, -0.5, None, "fast"])
def test_sol_v1_pays_a_broken_fraction_as_untimed(f):
    assert reward_sol_v1(at_light(f)) == v1.REWARD_CORRECT
    missing = at_light(0.5)
    del missing.timing["sol_fraction"]  # a verdict stored before the field
    assert reward_sol_v1(missing) == v1.REWARD_CORRECT


def test_sol_v1_pays_a_verdict_that_never_issued_the_tasks_precision_as_untimed():
    """The bf16 shortcut of an FP8 task: correct and timed, its instruction evidence failed."""
    assert reward_sol_v1(at_light(0.9, passed=False)) == v1.REWARD_CORRECT
    assert reward_sol_v1(at_light(0.9, passed=True)) == pytest.approx(0.92)
    assert reward_sol_v1(at_light(0.9, passed=None)) == pytest.approx(0.92)  # unreadable: no claim
    assert reward_v4(at_light(0.9, passed=False)) == reward_v4(at_light(0.9))  # v4 does not read it


def test_sol_v1_keeps_v4s_other_rows():
    assert reward_sol_v1(at_light(0.9, precise=False)) == v1.REWARD_CORRECT
    untimed = at_light(0.9)
    untimed.timed = False
    assert reward_sol_v1(untimed) == v1.REWARD_CORRECT
    for stage in FAILURE_STAGES:
        v = make(stage)
        v.timing = {"sol_fraction": 1.0}
        assert reward_sol_v1(v) == reward_v4(v)


@given(sol_fractions, sol_fractions)
def test_sol_v1_is_monotone_in_the_fraction(a: float, b: float):
    lo, hi = sorted((a, b))
    assert v1.REWARD_CORRECT < reward_sol_v1(at_light(lo)) <= reward_sol_v1(at_light(hi)) <= 1.0


@given(any_verdict(), st.one_of(sol_fractions, any_float), st.sampled_from([None, True, False]))
def test_sol_v1_is_bounded_and_never_pays_a_failure_more_than_v4(v: Verdict, f, passed):
    v.timing = {"precise": True, "sol_fraction": f}
    v.instructions = {} if passed is None else {"passed": passed}
    r = reward_sol_v1(v)
    assert isinstance(r, float) and math.isfinite(r) and -1.0 <= r <= 1.0
    if v.violations or v.stage != Stage.CORRECT:
        assert r == reward_v4(v)


@given(correct_verdict(), failing_verdict(), st.one_of(sol_fractions, any_float))
def test_sol_v1_every_correct_beats_every_failure(good: Verdict, bad: Verdict, f):
    good.timing = {"precise": True, "sol_fraction": f}
    assert reward_sol_v1(good) > reward_sol_v1(bad)
