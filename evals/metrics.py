"""Scaling metrics for best-of-N evaluation: fast_p, geometric means, unbiased best-of-k curves.

Every estimator is exact for the samples at hand (no resampling noise), so two runs with equal
verdicts give equal numbers.

Example::

    from evals.metrics import best_of_k_curve, fast_p, prob_any_correct
    fast_p([None, 1.5, 0.8, 2.5], 1.0)           # 0.5: two of four correct and faster than the baseline
    best_of_k_curve([-0.5, 0.2, 0.6], [1, 2, 3])  # [0.1, 0.4667, 0.6] (up to rounding)
    prob_any_correct(c=1, n=4, k=2)               # 0.5
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence


def fast_p(speedups_or_none: Sequence[float | None], p: float) -> float:
    """KernelBench's fast_p: the fraction of candidates that are correct *and* faster than ``p``.

    ``fast_p = |{i : correct_i and speedup_i > p}| / N``. Entries are ``None`` for a candidate that is
    not correct, else its speedup over the baseline (baseline time / candidate time). ``p = 0`` is
    the correct rate: every correct entry counts, including ``math.nan`` for a correct but untimed
    one (CPU), since a real measurement is always > 0. For ``p > 0`` a NaN never counts. An empty
    list gives 0.0.
    """
    if not speedups_or_none:
        return 0.0
    if p == 0:
        hits = sum(s is not None for s in speedups_or_none)
    else:
        hits = sum(s is not None and not math.isnan(s) and s > p for s in speedups_or_none)
    return hits / len(speedups_or_none)


def geomean(values: Iterable[float]) -> float | None:
    """Geometric mean ``exp(mean(log v))`` of positive finite values; None for an empty input.

    Raises ``ValueError`` for a value that is not positive and finite (a speedup of 0 or inf is a
    broken measurement, never silently averaged).
    """
    logs = []
    for v in values:
        if not (math.isfinite(v) and v > 0):
            raise ValueError(f"geomean needs positive finite values, got {v!r}")
        logs.append(math.log(v))
    return math.exp(math.fsum(logs) / len(logs)) if logs else None


def _expected_max(xs: list[float], k: int) -> float:
    """``sum_i x_(i) C(i-1, k-1) / C(n, k)`` over ascending ``xs`` with exact integer binomials."""
    n = len(xs)
    total = math.comb(n, k)
    acc = 0.0
    weight = 1  # C(i-1, k-1) at i = k
    for i in range(k, n + 1):
        acc += xs[i - 1] * (weight / total)  # int / int is correctly rounded at any size
        weight = weight * i // (i - k + 1)  # C(i, k-1) = C(i-1, k-1) * i / (i-k+1), exact
    return acc


def best_of_k_curve(scores: Sequence[float], ks: Iterable[int]) -> list[float]:
    """Unbiased expected best score of ``k`` samples drawn without replacement from ``scores``.

    With ``x_(1) <= ... <= x_(n)`` the sorted scores, a uniformly random ``k``-subset has its
    maximum at rank ``i`` with probability ``C(i-1, k-1) / C(n, k)``, so

        ``E[max of k] = sum_{i=k}^{n} x_(i) * C(i-1, k-1) / C(n, k)``.

    Ties need no special care (tied values are interchangeable). Binomials are exact Python
    integers built by a recurrence, so large ``n`` neither overflows nor loses precision beyond
    the final division. ``k = 1`` is the mean, ``k = n`` the maximum. Raises ``ValueError`` for
    ``k`` outside ``1..n``.
    """
    xs = sorted(float(s) for s in scores)
    out = []
    for k in ks:
        if not 1 <= k <= len(xs):
            raise ValueError(f"k must be in 1..{len(xs)}, got {k}")
        out.append(_expected_max(xs, k))
    return out


def prob_any_correct(c: int, n: int, k: int) -> float:
    """pass@k: the chance that ``k`` of ``n`` samples (``c`` correct), drawn without replacement,
    include a correct one: ``1 - C(n-c, k) / C(n, k)`` (Chen et al. 2021, unbiased)."""
    if not (0 <= c <= n and 1 <= k <= n):
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got c={c} n={n} k={k}")
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)
