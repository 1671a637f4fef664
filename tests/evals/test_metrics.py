"""The scaling metrics against brute force: best-of-k over every k-subset, pass@k, fast_p, geomean."""

from __future__ import annotations

import itertools
import math
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evals.metrics import best_of_k_curve, fast_p, geomean, prob_any_correct

# Few distinct values so ties are common; up to 9 samples keeps C(9, k) enumerable.
SCORES = st.lists(st.sampled_from([-1.0, -0.5, 0.2, 0.2, 0.6, 0.93, 1.0]), min_size=1, max_size=9)


@settings(max_examples=200, deadline=None)
@given(scores=SCORES)
def test_best_of_k_matches_enumeration_of_all_subsets(scores):
    n = len(scores)
    curve = best_of_k_curve(scores, range(1, n + 1))
    for k, estimate in zip(range(1, n + 1), curve):
        brute = statistics.fmean(max(sub) for sub in itertools.combinations(scores, k))
        assert estimate == pytest.approx(brute, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(scores=SCORES)
def test_best_of_k_endpoints_are_mean_and_max_and_never_decrease(scores):
    curve = best_of_k_curve(scores, range(1, len(scores) + 1))
    assert curve[0] == pytest.approx(statistics.fmean(scores))
    assert curve[-1] == pytest.approx(max(scores))
    assert all(a <= b + 1e-12 for a, b in zip(curve, curve[1:]))


def test_best_of_k_large_n_is_finite_and_exact_at_the_ends():
    scores = [i % 17 / 17 for i in range(2000)]
    curve = best_of_k_curve(scores, [1, 10, 1999, 2000])
    assert curve[0] == pytest.approx(statistics.fmean(scores))
    assert curve[-1] == max(scores) and all(math.isfinite(c) for c in curve)


@pytest.mark.parametrize("k", [0, 4])
def test_best_of_k_rejects_k_outside_range(k):
    with pytest.raises(ValueError):
        best_of_k_curve([0.1, 0.2, 0.3], [k])


@settings(max_examples=100, deadline=None)
@given(correct=st.lists(st.booleans(), min_size=1, max_size=9), data=st.data())
def test_prob_any_correct_matches_enumeration(correct, data):
    n, c = len(correct), sum(correct)
    k = data.draw(st.integers(1, n))
    brute = statistics.fmean(any(sub) for sub in itertools.combinations(correct, k))
    assert prob_any_correct(c, n, k) == pytest.approx(brute, abs=1e-12)


def test_prob_any_correct_edges():
    assert prob_any_correct(0, 5, 5) == 0.0
    assert prob_any_correct(5, 5, 1) == 1.0
    with pytest.raises(ValueError):
        prob_any_correct(6, 5, 1)


def test_fast_p_counts_correct_and_strictly_faster():
    values = [None, 1.0, 1.2, 2.5, 0.5]
    assert fast_p(values, 0) == pytest.approx(4 / 5)
    assert fast_p(values, 1.0) == pytest.approx(2 / 5)  # 1.0 is not faster than 1.0
    assert fast_p(values, 1.2) == pytest.approx(1 / 5)
    assert fast_p(values, 2.0) == pytest.approx(1 / 5)


def test_fast_p_untimed_correct_counts_only_at_zero():
    values = [math.nan, math.nan, None]
    assert fast_p(values, 0) == pytest.approx(2 / 3)
    assert fast_p(values, 1.0) == 0.0


def test_fast_p_empty_and_all_wrong():
    assert fast_p([], 0) == 0.0
    assert fast_p([None, None], 0) == 0.0


def test_geomean_values_and_edges():
    assert geomean([2.0, 8.0]) == pytest.approx(4.0)
    assert geomean([3.0]) == pytest.approx(3.0)
    assert geomean([]) is None
    for bad in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(ValueError):
            geomean([1.0, bad])
