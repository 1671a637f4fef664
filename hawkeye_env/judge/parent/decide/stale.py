"""Whether a failing repeat's output is the answer for other inputs: the test behind a stale or
cached-output violation.

A repeat (a call on fresh inputs, a rerun on the same inputs, an output kept from the timed loop)
that misses its own reference is stale only when it matches the answer for inputs the candidate
saw at another call: the parent's reference of those inputs, or the candidate's own output there.
An honest kernel a little off on one draw is far from every other input's answer (independent
random outputs differ by a relative L2 of ~1.4), so its failure stays ``incorrect``.

Matching is measured by relative L2 on the whole output, in units of the output's own relative-L2
bound ``b`` (``correctness.compare``'s ``rel_l2_bound``): output ``o`` matches the answer ``a`` for
other inputs when ``||o - a|| / ||a|| <= MATCH_L2 * b`` and ``||o - r|| / ||r|| >= CLOSER * ||o - a||
/ ||a||`` for its own reference ``r``. The second condition keeps an honest output from being
called stale where the two inputs' answers are themselves close (a near-constant output): an
honest ``o`` is at least as far from ``a`` as from ``r`` up to the distance between ``r`` and ``a``,
so it cannot be ``CLOSER`` times nearer to ``a``.
"""

from __future__ import annotations

import torch

# A stale answer computed by a kernel that passes on its own inputs lies within the bound ``b`` of
# those inputs' answer; the other answer may be a native-precision reference (its error within
# b / 4 by the tolerance's ``l2_multiple``), so twice the bound is the match.
MATCH_L2 = 2.0
# How much nearer to the other answer than to its own reference a stale output must be.
CLOSER = 4.0


def rel_l2_distance(out: torch.Tensor, ref: torch.Tensor) -> float:
    """``||out - ref|| / ||ref||`` in float64 on ``out``'s device (inf for a zero ``ref``)."""
    o, r = out.detach().to(torch.float64), ref.detach().to(out.device).to(torch.float64)
    norm = float(r.norm())
    return float((o - r).norm()) / norm if norm > 0 else float("inf")


def other_answer(out: torch.Tensor, own: torch.Tensor, others: list[tuple[str, torch.Tensor]],
                 l2_bound: float) -> str | None:
    """The label of the first of ``others`` whose answer ``out`` matches (module docstring), or None.

    Args:
        out: the repeat's output (any dtype), finite.
        own: the float64 (or float32) reference of the repeat's own inputs, same shape.
        others: ``(label, answer)`` for inputs of other calls: a reference or the candidate's own
            output there; answers of another shape are skipped.
        l2_bound: ``out``'s relative-L2 bound against ``own``.
    """
    if not torch.isfinite(out).all():
        return None
    mine = rel_l2_distance(out, own)
    for label, answer in others:
        if not isinstance(answer, torch.Tensor) or tuple(answer.shape) != tuple(out.shape):
            continue
        if not bool(torch.isfinite(answer).all()):
            continue
        theirs = rel_l2_distance(out, answer)
        if theirs <= MATCH_L2 * l2_bound and mine >= CLOSER * theirs:
            return label
    return None


__all__ = ["CLOSER", "MATCH_L2", "other_answer", "rel_l2_distance"]
