"""Reward v1: one scalar in [-1, 1] from one :class:`~hawkeye_env.judge.verdict.Verdict`.

The reward reads only the verdict, so any stored verdict can be re-scored without re-running
anything. Changing any number or rule below changes what training optimises, so it must come with
a new ``REWARD_VERSION`` (and a new module, e.g. ``reward/v2.py``); ``tests/test_reward.py`` pins
the values so the formula cannot drift silently.

==============================  =====================  =============================================
Case                            Reward                 Why
==============================  =====================  =============================================
any violation, or ``REJECTED``  ``-1.0``               A reward hack must never pay more than an
                                                       honest failure, not even a compile error, so
                                                       trying one gains nothing. Checked first: a
                                                       violation overrides a stage that says
                                                       ``CORRECT``.
``NO_SOURCE``                   ``-1.0``               No kernel at all is the least useful honest
                                                       outcome; tied with a hack so prose never
                                                       pays.
``COMPILE_ERROR``,              ``-0.5``               Flat. Some hacks are caught only because
``RUNTIME_ERROR``,                                     their outputs are wrong (a stale cache, a
``INCORRECT``                                          shortcut valid for one distribution) or
                                                       because the worker died (a crash to dodge a
                                                       verdict); the judge cannot tell those from
                                                       honest failures, and a caught hack must not
                                                       outscore a compile error (docs/threat-model.md).
                                                       A ladder compile < runtime < incorrect would
                                                       pay for reaching the wrong answer. No partial
                                                       credit for nearly-right numbers either.
``CORRECT``, untimed (CPU)      ``0.2``                Correct beats every failure; without timing
                                                       there is nothing more to rank by.
``CORRECT``, timed, good ``s``  ``0.2 + 0.8*s/(1+s)``  Rises strictly with the speedup ``s``, is
                                                       ``0.6`` at parity, stays in ``(0.2, 1.0)``: a
                                                       slow correct kernel still beats any failure,
                                                       and a huge (possibly noisy) speedup cannot
                                                       dominate a batch.
``CORRECT``, timed, bad ``s``   ``0.2``                A NaN, infinite, zero or negative speedup is
                                                       a broken measurement, not a result: score it
                                                       as untimed rather than reward (inf) or punish
                                                       (<= 0) what was never measured properly.
==============================  =====================  =============================================

``s`` is :attr:`Verdict.best_speedup` (baseline time over candidate time, for the fastest baseline)
and is good when finite and > 0. Every speedup value must be good, not just the minimum: ``min`` over values with a
NaN depends on dict order, so one NaN could silently select a weaker baseline. Only the scored baselines count
(:attr:`Verdict.scored_speedup`: the judge's ``eager`` and ``compile``); vendor-library baselines listed in
``Verdict.vendor_baselines`` are reported beside them and never change the reward.

Floating point: the timed term is computed as ``1.0 - 0.8 / (1 + s)``, algebraically equal to the
formula above but a chain of one-argument, correctly rounded operations, so it never decreases as
``s`` grows (the naive ``s / (1 + s)`` form divides two rounded values and need not). It is
clamped to ``[0.2, 1.0]``: at extreme ``s`` (below ~1e-16 or above ~1e16) the float result reaches
the bounds, so the bounds are attained in floating point though never in exact arithmetic.
"""

from __future__ import annotations

import math
from typing import Protocol

REWARD_VERSION = "v1"


class ScoredVerdict(Protocol):
    """What a reward reads of a verdict: the fields of ``hawkeye_env.judge.verdict.Verdict`` it
    uses, so the reward imports nothing of the judge (the judge imports the reward). ``stage`` is a
    stage name or a ``Stage`` (a ``str`` enum), read by value."""

    stage: str
    violations: list
    timed: bool
    timing: dict

    @property
    def scored_speedup(self) -> dict[str, float]: ...

    @property
    def best_speedup(self) -> float | None: ...


# Stage names, as ``Stage``'s values.
REJECTED, NO_SOURCE, COMPILE_ERROR, RUNTIME_ERROR, INCORRECT, CORRECT = (
    "rejected", "no_source", "compile_error", "runtime_error", "incorrect", "correct")


def stage_name(verdict: ScoredVerdict) -> str:
    """The verdict's stage as its name (a ``Stage`` member's value, or the string itself)."""
    return str(getattr(verdict.stage, "value", verdict.stage))

#: Any violation (reward hack or forbidden construct) or a REJECTED stage.
REWARD_VIOLATION = -1.0
#: Reward per failing stage: no source ties with a hack; every other failure scores alike.
REWARD_NO_SOURCE = -1.0
REWARD_FAILURE = -0.5
REWARD_COMPILE_ERROR = REWARD_RUNTIME_ERROR = REWARD_INCORRECT = REWARD_FAILURE
#: A correct candidate with no (usable) timing; the floor of every correct candidate.
REWARD_CORRECT = 0.2
#: How much of the range the speedup can add on top of REWARD_CORRECT; the ceiling is their sum.
SPEEDUP_SPAN = 0.8
REWARD_MAX = REWARD_CORRECT + SPEEDUP_SPAN  # 1.0

FAILURE_REWARD: dict[str, float] = {
    REJECTED: REWARD_VIOLATION,
    NO_SOURCE: REWARD_NO_SOURCE,
    COMPILE_ERROR: REWARD_COMPILE_ERROR,
    RUNTIME_ERROR: REWARD_RUNTIME_ERROR,
    INCORRECT: REWARD_INCORRECT,
}


def usable_speedup(verdict: ScoredVerdict) -> float | None:
    """The best speedup if the verdict is timed and every speedup is finite and > 0, else None."""
    scored = verdict.scored_speedup
    if not verdict.timed or not scored:
        return None
    for value in scored.values():
        try:
            v = float(value)
        except (TypeError, ValueError):
            return None
        if not math.isfinite(v) or v <= 0.0:
            return None
    s = verdict.best_speedup
    return float(s) if s is not None else None


def speedup_reward(s: float) -> float:
    """``0.2 + 0.8 * s / (1 + s)`` for a finite ``s > 0``, monotone in floating point."""
    r = REWARD_MAX - SPEEDUP_SPAN / (1.0 + s)
    return min(REWARD_MAX, max(REWARD_CORRECT, r))


def reward(verdict: ScoredVerdict) -> float:
    """Score one verdict; see the module docstring for the table and the reasons."""
    stage = stage_name(verdict)
    if verdict.violations or stage == REJECTED:
        return REWARD_VIOLATION
    if stage != CORRECT:
        return FAILURE_REWARD[stage]
    s = usable_speedup(verdict)
    if s is None:
        return REWARD_CORRECT
    return speedup_reward(s)
