"""The reward: one scalar in [-1, 1] from one :class:`~hawkeye_env.judge.shared.verdict.Verdict`.

The reward reads only the verdict, so any stored verdict can be re-scored without re-running
anything, under any version below (``REWARDS``). Changing any number or rule changes what training
optimises, so it comes with a new ``REWARD_VERSION`` and a row in the history table;
``tests/test_reward.py`` pins the values so the formula cannot drift silently.

The table (current version, v4):

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
``RUNTIME_ERROR``,                                     their outputs are wrong or their worker died;
``INCORRECT``                                          the judge cannot tell those from honest
                                                       failures, and a caught hack must not outscore
                                                       a compile error (``docs/threat-model.md``). A
                                                       ladder compile < runtime < incorrect would
                                                       pay for reaching the wrong answer.
``RUNTIME_ERROR`` that is       ``0.0``                A kernel the CPU interpreter cannot run
``not_checkable_on_cpu``                               (inline PTX, a libdevice function with no CPU
                                                       counterpart) may be right on a GPU: no
                                                       penalty, and still below every correct
                                                       kernel, so it never pays more than an honest
                                                       one. The GPU judges it.
``CORRECT``, untimed (CPU)      ``0.2``                Correct beats every failure; without timing
                                                       there is nothing more to rank by.
``CORRECT``, timed imprecisely  ``0.2``                Every round's coefficient of variation above
                                                       the timer's gate: a lucky draw is not paid.
``CORRECT``, timed, good ``s``  ``0.2 + 0.8*s/(1+s)``  Rises strictly with the speedup ``s``, is
                                                       ``0.6`` at parity, stays in ``(0.2, 1.0)``: a
                                                       slow correct kernel still beats any failure,
                                                       and a huge (possibly noisy) speedup cannot
                                                       dominate a batch.
``CORRECT``, timed, bad ``s``   ``0.2``                A NaN, infinite, zero or negative speedup is
                                                       a broken measurement, not a result.
==============================  =====================  =============================================

``s`` is :attr:`Verdict.best_speedup`: baseline time over candidate time for the fastest *scored*
baseline (``eager`` and ``compile``; vendor baselines are reported, never scored), and is good when
every scored speedup is finite and > 0 (``min`` over values with a NaN would depend on dict order).
The timed term is computed as ``1.0 - 0.8 / (1 + s)`` (correctly rounded one-argument steps, never
decreasing as ``s`` grows) and clamped to ``[0.2, 1.0]``.

Version history (every version stays callable in ``REWARDS``):

=======  ==========================================================================================
version  what changed
=======  ==========================================================================================
v1       the table above without the imprecise-timing and not-checkable rows; ``s`` from whole-call
         times, host launch included
v2       ``s`` from device times with the host launch kept out (reported as ``host_bound``, never
         paid: between verdicts of one kernel the host launch moves 2-2.7x where the device time
         moves under 3%, BENCHMARKS.md "Judge trust and measurement"); an imprecise timing pays 0.2
v3       v2's function; ``s``'s times come from the trusted replay of the candidate's launch plan
v4       a CPU verdict whose kernels the interpreter cannot run (``failure == not_checkable_on_cpu``)
         pays 0.0 instead of -0.5
sol-v1   beside v4, not after it (``REWARD_VERSION`` stays v4): v4's table with the timed rows paid
         by the fraction of the speed of light, and a timed verdict whose kernels never issued the
         task's precision paid as untimed (below)
=======  ==========================================================================================

The speed-of-light reward, ``sol-v1`` (``REWARDS["sol-v1"]``; the env's ``reward="sol-v1"``):

==============================  =====================  =============================================
Case                            Reward                 Why
==============================  =====================  =============================================
every row of v4's table but     as v4                  The same order of outcomes: hacks, failures,
the timed, good one                                    the not-checkable CPU case, untimed correct.
``CORRECT``, timed, good ``f``  ``0.2 + 0.8*min(f,1)`` ``f`` is ``timing["sol_fraction"]``: the
                                                       task's speed of light over the candidate's
                                                       device time. Rises strictly as the time
                                                       falls, 1.0 only at the speed of light.
``CORRECT``, timed, the task's  ``0.2``                The kernels' machine code shows no tensor-core
precision never issued                                 instruction on the task's operand types
(``instructions["passed"]``                            (``Verdict.instructions``): an FP8 GEMM
is False)                                              answered with bf16 MMAs is correct, but its
                                                       speed is not the task's. Paid as untimed,
                                                       still above every failure; evidence that
                                                       could not be read (``passed`` None) makes no
                                                       claim and changes nothing.
``CORRECT``, timed, bad ``f``   ``0.2``                A missing (a verdict stored before the field),
                                                       NaN, infinite, zero or negative fraction.
==============================  =====================  =============================================

Why the fraction of the speed of light, not the fraction of the gap to it closed from the best
baseline (``(t_base - t) / (t_base - t_sol)``): the gap's denominator is the baseline's distance to
the speed of light, which differs from task to task and is small exactly where a baseline is good
(a bandwidth-bound op torch.compile runs at 90% of it: there 3% of timing noise moves the score by
0.3), and a kernel slower than the baseline scores without a lower bound. ``t_sol / t`` needs no
baseline measurement (its only noise is the candidate's own time), lies in (0, 1] for every time
the roofline floor allows, and reads the same on every task. Its cost: a task whose speed of light
is out of reach in practice (a launch-bound shape) pays every kernel less; within a task, which is
what a group-relative policy gradient compares, it ranks kernels exactly as their times do.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Protocol

REWARD_VERSION = "v4"


class ScoredVerdict(Protocol):
    """What a reward reads of a verdict: the fields of ``hawkeye_env.judge.shared.verdict.Verdict`` it
    uses, so the reward imports nothing of the judge (the judge imports the reward). ``stage`` and
    ``failure`` are names or ``str`` enums, read by value; ``failure`` may be absent (v1-v3),
    ``instructions`` too (every version but sol-v1)."""

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
NOT_CHECKABLE_ON_CPU = "not_checkable_on_cpu"  # ``Failure.NOT_CHECKABLE_ON_CPU``'s value

REWARD_VIOLATION = -1.0
REWARD_NO_SOURCE = -1.0
REWARD_FAILURE = -0.5
REWARD_COMPILE_ERROR = REWARD_RUNTIME_ERROR = REWARD_INCORRECT = REWARD_FAILURE
REWARD_NOT_CHECKABLE = 0.0
REWARD_CORRECT = 0.2  # the floor of every correct candidate
SPEEDUP_SPAN = 0.8  # how much the speedup can add on top of REWARD_CORRECT
REWARD_MAX = REWARD_CORRECT + SPEEDUP_SPAN  # 1.0

FAILURE_REWARD: dict[str, float] = {REJECTED: REWARD_VIOLATION, NO_SOURCE: REWARD_NO_SOURCE,
                                    COMPILE_ERROR: REWARD_FAILURE, RUNTIME_ERROR: REWARD_FAILURE,
                                    INCORRECT: REWARD_FAILURE}


def _name(value) -> str:
    return str(getattr(value, "value", value))


def stage_name(verdict: ScoredVerdict) -> str:
    """The verdict's stage as its name (a ``Stage`` member's value, or the string itself)."""
    return _name(verdict.stage)


def usable_speedup(verdict: ScoredVerdict) -> float | None:
    """The best speedup if the verdict is timed and every scored speedup is finite and > 0, else None."""
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
    return min(REWARD_MAX, max(REWARD_CORRECT, REWARD_MAX - SPEEDUP_SPAN / (1.0 + s)))


def _scored(verdict: ScoredVerdict, imprecise_pays_floor: bool, not_checkable_free: bool) -> float:
    stage = stage_name(verdict)
    if verdict.violations or stage == REJECTED:
        return REWARD_VIOLATION
    if not_checkable_free and stage == RUNTIME_ERROR and _name(getattr(verdict, "failure", "")) == NOT_CHECKABLE_ON_CPU:
        return REWARD_NOT_CHECKABLE
    if stage != CORRECT:
        return FAILURE_REWARD[stage]
    if imprecise_pays_floor and verdict.timed and verdict.timing.get("precise") is False:
        return REWARD_CORRECT
    s = usable_speedup(verdict)
    return REWARD_CORRECT if s is None else speedup_reward(s)


def reward_v1(verdict: ScoredVerdict) -> float:
    return _scored(verdict, imprecise_pays_floor=False, not_checkable_free=False)


def reward_v2(verdict: ScoredVerdict) -> float:
    return _scored(verdict, imprecise_pays_floor=True, not_checkable_free=False)


def reward_v4(verdict: ScoredVerdict) -> float:
    return _scored(verdict, imprecise_pays_floor=True, not_checkable_free=True)


def usable_sol_fraction(verdict: ScoredVerdict) -> float | None:
    """``timing["sol_fraction"]`` capped at 1.0 when it is finite and > 0, else None."""
    try:
        f = float(verdict.timing.get("sol_fraction"))
    except (TypeError, ValueError):
        return None
    return min(f, 1.0) if math.isfinite(f) and f > 0.0 else None


def sol_reward(f: float) -> float:
    """``0.2 + 0.8 * f`` for a speed-of-light fraction ``f`` in (0, 1]."""
    return min(REWARD_MAX, max(REWARD_CORRECT, REWARD_CORRECT + SPEEDUP_SPAN * f))


def reward_sol_v1(verdict: ScoredVerdict) -> float:
    """The speed-of-light reward (module docstring, ``sol-v1``)."""
    paid = reward_v4(verdict)
    if paid <= REWARD_CORRECT or not verdict.timed:
        return paid  # a failure, the not-checkable case, an untimed or imprecise correct verdict
    if (getattr(verdict, "instructions", None) or {}).get("passed") is False:
        return REWARD_CORRECT
    f = usable_sol_fraction(verdict)
    return REWARD_CORRECT if f is None else sol_reward(f)


REWARDS: dict[str, Callable[[ScoredVerdict], float]] = {"v1": reward_v1, "v2": reward_v2, "v3": reward_v2,
                                                        "v4": reward_v4, "sol-v1": reward_sol_v1}
reward = REWARDS[REWARD_VERSION]

__all__ = ["FAILURE_REWARD", "REWARD_COMPILE_ERROR", "REWARD_CORRECT", "REWARD_INCORRECT", "REWARD_RUNTIME_ERROR",
           "REWARD_VIOLATION", "REWARDS", "REWARD_VERSION", "ScoredVerdict", "reward", "reward_sol_v1", "reward_v1",
           "reward_v2", "reward_v4", "sol_reward", "speedup_reward", "stage_name", "usable_sol_fraction",
           "usable_speedup"]
