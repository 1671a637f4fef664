"""Reward v3: v2's table and precision rule (``reward/v2.py``) on device times alone.

What changed against v2 is the formula's input: ``s`` (``Verdict.best_speedup``) is the ratio of
the candidate's and the fastest baseline's *device* times, the host launch kept out and reported
beside them (``host_bound`` in ``Verdict.timing`` and in the feedback) but never paid
(``hawkeye_env/judge/timing.py`` says why, with the H200 figures: between verdicts of one kernel
its host launch moved 2-2.7x while its device time moved under 3%). On CUDA both come from the
trusted replay of the candidate's launch plan, never from the candidate's own process.

The values are v2's: ``-1.0`` for any violation and for no source, ``-0.5`` for every other
failure, ``0.2`` for correct and untimed or timed imprecisely, ``0.2 + 0.8 * s / (1 + s)`` for
correct and timed. ``tests/test_reward.py`` pins them.
"""

from __future__ import annotations

from reward.v1 import ScoredVerdict
from reward.v2 import reward as reward_v2

REWARD_VERSION = "v3"


def reward(verdict: ScoredVerdict) -> float:
    """Score one verdict: v2's function; the version names the measurement its input comes from."""
    return reward_v2(verdict)
