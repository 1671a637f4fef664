"""Reward v2: v1's table (``reward/v1.py``) on device times, the host launch kept out.

What changed against v1 is the formula's input, not its shape:

* ``s`` (``Verdict.best_speedup``) is the ratio of *scored* times, each the call's device time with
  the host launch kept out, measured the same way for the candidate and every baseline
  (``hawkeye_env/judge/timing.py``); the host launch is reported beside it (``host_bound`` in
  ``Verdict.timing`` and the feedback) and not paid, because between verdicts of one kernel it
  moves 2-2.7x where the device time moves under 3%. v1 read whole-call times, host launch
  included, in which small kernels were mostly Python.
* A timed verdict whose measurement did not reach the timer's precision (every round's
  coefficient of variation above the gate: ``Verdict.timing["precise"]`` false) is paid as
  correct and untimed, ``0.2``: the reward does not pay for a lucky draw.

Everything else is v1's: ``-1.0`` for any violation and for no source, ``-0.5`` for every other
failure, ``0.2`` for correct and untimed, ``0.2 + 0.8 * s / (1 + s)`` for correct and timed.
``tests/test_reward.py`` pins the values.
"""

from __future__ import annotations

from reward.v1 import (
    CORRECT,
    FAILURE_REWARD,
    REJECTED,
    REWARD_CORRECT,
    REWARD_VIOLATION,
    ScoredVerdict,
    speedup_reward,
    stage_name,
    usable_speedup,
)

REWARD_VERSION = "v2"


def reward(verdict: ScoredVerdict) -> float:
    """Score one verdict; see the module docstring and ``reward/v1.py`` for the table."""
    stage = stage_name(verdict)
    if verdict.violations or stage == REJECTED:
        return REWARD_VIOLATION
    if stage != CORRECT:
        return FAILURE_REWARD[stage]
    if verdict.timed and verdict.timing.get("precise") is False:
        return REWARD_CORRECT
    s = usable_speedup(verdict)
    if s is None:
        return REWARD_CORRECT
    return speedup_reward(s)
