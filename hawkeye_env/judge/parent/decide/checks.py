"""The parent's correctness checks of a reply's outputs against its own references.

``check_trials`` decides the correctness trials (first call of each trial, then its repeats: a
call on fresh inputs and a rerun on the same inputs); ``check_kept`` the outputs kept from the
timed loop. Each output is compared with ``correctness.compare`` against the float64 reference
and calibrated by the native-precision reference (``row["native"]``, from ``references.py``)
when the row has one; the expected dtypes are then the native reference's, never the worker's.
``repeat_failure`` tells a stale or cached answer (a violation: the output matches the answer for
other inputs, ``stale.py``) from a wrong one (incorrect). Once every trial passed, the elements over
their bound in each call on different inputs of one shape must not recur from call to call
(``recurrence.py``, docs/threat-model.md #28). A trial whose float64 reference is not finite is not
scored (docs/threat-model.md #25); a verdict none of whose trials could be scored is incorrect.
Everything here runs in the trusted parent on tensors it decoded from a reply, against references it
computed itself.
"""

from __future__ import annotations

import math

import torch

from hawkeye_env.judge.parent.decide import correctness, recurrence
from hawkeye_env.judge.parent.decide.stale import other_answer, rel_l2_distance
from hawkeye_env.judge.shared.verdict import Stage, Verdict, Violation
from hawkeye_env.tasks.spec import TaskSpec

NO_FINITE_REFERENCE = (
    "the task's reference is not finite on any of the planned inputs: no trial could be scored"
)


def _natives(natives: list | None, n: int) -> list:
    return list(natives) if natives is not None else [None] * n


def _dtypes(dtypes: list, natives: list | None) -> list[str]:
    """The expected output dtypes: the parent's native reference's when it has one."""
    if natives is None:
        return list(dtypes)
    return [correctness.dtype_name(x.dtype) if isinstance(x, torch.Tensor) else d
            for x, d in zip(natives, list(dtypes) + [None] * (len(natives) - len(dtypes)))]


def _compare(spec: TaskSpec, o, r, d: str, device: str, native, i: int = 0) -> dict:
    if isinstance(r, torch.Tensor) and not isinstance(o, torch.Tensor):  # a reply's None output
        inf = float("inf")
        return {"ok": False, "scored": True, "reason": f"an output is {type(o).__name__}, not a tensor",
                "max_err_ratio": inf, "quantile_err_ratio": inf, "rel_l2": inf, "rel_l2_bound": 0.0,
                "quantile_bound": 1.0, "worst_bound": 0.0}
    return correctness.compare(o, r, getattr(torch, d), spec.tolerance(d), device, native=native,
                               label=f"output {i}")


def _finite(refs: list) -> bool:
    return all(not isinstance(r, torch.Tensor) or bool(torch.isfinite(r).all()) for r in refs)


def first_failure(spec: TaskSpec, outs: list, refs: list, dtypes: list, device: str,
                  natives: list | None = None) -> dict | None:
    """Compare every output to its reference (calibrated by ``natives`` when given); the first
    failing check, or None."""
    if len(outs) != len(refs):
        return {"ok": False, "reason": f"{len(outs)} outputs, expected {len(refs)}"}
    dtypes = _dtypes(dtypes, natives)
    for i, (o, r, d, n) in enumerate(zip(outs, refs, dtypes, _natives(natives, len(refs)))):
        c = _compare(spec, o, r, d, device, n, i)
        if not c["ok"]:
            return c
    return None


# A repeat whose relative L2 error is within this multiple of its bound is called numerically
# borderline in its message; beyond it, plainly wrong. Either is ``INCORRECT``, never a violation.
BORDERLINE_L2 = 4.0


def _structural(o, c: dict) -> bool:
    """A failure no numerical error explains: a missing output, another shape or dtype."""
    return not isinstance(o, torch.Tensor) or c["reason"].startswith(("shape ", "dtype "))


def _incorrect(where: str, c: dict) -> str:
    rel_l2, l2_bound = float(c["rel_l2"]), float(c["rel_l2_bound"])
    if not math.isfinite(rel_l2):
        return f"correct on the checked inputs, but on {where} {c['reason']}"
    if rel_l2 <= l2_bound:
        return (f"numerically borderline: correct on the checked inputs, but on {where} "
                f"{c['reason']}; relative L2 {rel_l2:.3g} within {l2_bound:.3g}")
    if rel_l2 <= BORDERLINE_L2 * l2_bound:
        return (f"numerically borderline: correct on the checked inputs, but on {where} "
                f"{c['reason']}; relative L2 {rel_l2:.3g} is {rel_l2 / l2_bound:.2g}x its bound {l2_bound:.3g}")
    return (f"correct on the checked inputs, but wrong on {where}: {c['reason']}; relative L2 "
            f"{rel_l2:.3g} against a bound of {l2_bound:.3g}, and it matches no other inputs' answer")


def repeat_failure(spec: TaskSpec, outs: list, refs: list, dtypes: list, device: str,
                   what: str, where: str, natives: list | None = None, others: list | None = None,
                   first: list | None = None, compared: list | None = None) -> tuple[bool, str] | None:
    """Judge a repeat of a passed trial (a call on fresh inputs, a rerun on the same inputs, an
    output kept from the timed loop). None when every output passes or the reference is not
    finite (nothing to score); else ``(violation, message)``.

    A failing repeat is a violation (``stale_output``, ``nondeterministic``,
    ``stale_timed_output``) only on evidence of a cached or stale answer:

    - an output matches the answer for other inputs (``stale.other_answer``): ``others`` holds
      ``(label, outputs)`` pairs, the parent's references of inputs of other calls or the
      candidate's own outputs there, one tensor per output;
    - the failure is structural: the output count, a shape or a dtype differs from the reference's;
    - on a rerun of the same inputs (``first``: the first call's outputs on them), NaN/Inf where
      the first output was finite.

    Any other failure, however large, is ``INCORRECT``: an honest kernel a little over its bound on
    one more input draw, or one that overflows on it, is not a hack. ``what`` heads the
    violation's message; ``where`` names the repeat in the incorrect one. ``compared``, when
    given, receives each output's ``correctness.compare`` result.
    """
    if len(outs) != len(refs):
        return True, f"{what}: {len(outs)} outputs, expected {len(refs)}"
    if not _finite(refs):
        return None
    incorrect = None
    dtypes = _dtypes(dtypes, natives)
    for i, (o, r, d, n) in enumerate(zip(outs, refs, dtypes, _natives(natives, len(refs)))):
        c = _compare(spec, o, r, d, device, n, i)
        if compared is not None:
            compared.append(c)
        if c["ok"]:
            continue
        if _structural(o, c):
            return True, f"{what}: {c['reason']}"
        rel_l2 = float(c.get("rel_l2", math.nan))
        if not math.isfinite(rel_l2):
            before = first[i] if first is not None and i < len(first) else None
            if isinstance(before, torch.Tensor) and bool(torch.isfinite(before).all()):
                return True, f"{what}: {c['reason']}, and the first call on the same inputs was finite"
        else:
            label = other_answer(o, r, [(k, xs[i]) for k, xs in others or [] if i < len(xs)],
                                 float(c["rel_l2_bound"]))
            if label is not None:
                return True, (f"{what}: output {i} is the answer for {label}, not for its own inputs "
                               f"({c['reason']})")
        if incorrect is None:
            incorrect = _incorrect(where, c)
            before = first[i] if first is not None and i < len(first) else None
            if isinstance(before, torch.Tensor) and isinstance(o, torch.Tensor) and math.isfinite(rel_l2):
                drift = rel_l2_distance(o, before)
                incorrect += f"; it differs from the first call's output by relative L2 {drift:.3g}"
    return None if incorrect is None else (False, incorrect)


def _prior(rows: list[dict]) -> list[tuple[str, list]]:
    """Answers for the inputs of earlier trials: their references and the candidate's outputs."""
    got = []
    for k, row in enumerate(rows):
        got.append((f"the inputs of trial {k}", row["reference"]))
        got.append((f"the inputs of trial {k} (the candidate's own output there)", row["outputs"]))
    return got


# Appended to an incorrect repeat's message when the rerun drifted from the first call (``_drifted``):
# the one thing a trial's repeats find changed besides their inputs (``PlanRunner.poison_changed``).
CARRIED_STATE = ("a repeated call finds every tensor made before the forward that an earlier call changed "
                 "filled with arbitrary bytes, so nothing kept between calls (a count of calls, a lazily "
                 "filled cache) may decide the output")


def _repeats(spec: TaskSpec, t: dict, row: dict, earlier: list[dict], dtypes: list,
             device: str, fresh_checks: list) -> tuple[str, bool, str] | None:
    """The first failing repeat of a passed trial row (``fresh``, then ``rerun``) as ``(code,
    violation, message)`` (``repeat_failure``), or None. A repeat is stale when it matches the
    answer for the other inputs of this trial or of the ``earlier`` trials' rows. The fresh
    call's comparisons are appended to ``fresh_checks``."""
    at = f"shape {t['shape']} with {t['distribution']} inputs"
    prior = _prior([r for r in earlier if _finite(r["reference"])])
    first = [("the first call's inputs", row["reference"]),
             ("the first call's inputs (the candidate's own first output)", row["outputs"])]
    repeats = []
    if "fresh" in row:
        fresh = row["fresh"]
        others = first + ([("the first call's inputs (the candidate's rerun output)", row["rerun"])]
                          if "rerun" in row else []) + prior
        repeats.append(("stale_output", "a repeated call on new inputs returned a wrong answer",
                        f"fresh inputs (a repeated call, {at})",
                        fresh["outputs"], fresh["reference"], fresh.get("native"), others, None))
    if "rerun" in row:
        fresh = row.get("fresh") or {}
        others = ([("the fresh inputs", fresh["reference"]),
                   ("the fresh inputs (the candidate's own output there)", fresh["outputs"])]
                  if fresh.get("reference") is not None else []) + prior
        repeats.append(("nondeterministic", "a second run on the same inputs failed",
                        f"a rerun on the same inputs ({at})", row["rerun"], row["reference"],
                        row.get("native"), others, row["outputs"]))
    for code, what, where, outs, refs, natives, others, same in repeats:
        failure = repeat_failure(spec, outs, refs, dtypes, device, what, where, natives, others, same,
                                 compared=fresh_checks if code == "stale_output" else None)
        if failure is not None:
            violation, message = failure
            return code, violation, f"{message}; {CARRIED_STATE}" if not violation and _drifted(row) else message
    return None


def _drifted(row: dict) -> bool:
    """Whether the rerun on the same inputs gave other bytes than the first call: state carried
    from call to call (or a nondeterministic kernel), not rounding."""
    pairs = zip(row.get("rerun") or [], row["outputs"])
    return any(isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and not torch.equal(a, b) for a, b in pairs)


def _keep_draws(draws: dict[tuple, list], t: dict, outs: list, compared: list[dict]) -> None:
    """Add one call's over-bound elements (``compare``'s ``over_bound``) to ``draws``, by shape
    and output index: the calls on different inputs ``_recurring`` compares."""
    for i, (o, c) in enumerate(zip(outs, compared)):
        if isinstance(o, torch.Tensor) and "over_bound" in c:
            key = (tuple(t["shape"].items()), i)
            draws.setdefault(key, []).append((c["over_bound"], tuple(o.shape)))


def _recurring(draws: dict[tuple, list]) -> str:
    """The failure message of the first output whose over-bound elements recur across its calls
    on different inputs (``recurrence.py``), or "". ``draws`` maps ``(shape items, output
    index)`` to ``(over_bound, output shape)`` per call (``_keep_draws``)."""
    for (shape, i), calls in draws.items():
        out_shape = calls[0][1]
        found = recurrence.recurring([x for x, _ in calls], math.prod(out_shape))
        if found is not None and found.score >= 1.0:
            return recurrence.failure(found, f"output {i}", out_shape, f"shape {dict(shape)}")
    return ""


def check_trials(spec: TaskSpec, plan: list[dict], rows: list[dict], v: Verdict, device: str) -> bool:
    """Decide the correctness trials of a reply into ``v`` (its ``trials`` rows, and stage,
    error and violations on a failure); True when every scored trial and its repeats passed, at
    least one trial was scored, and no output's over-bound elements recur across its calls on
    different inputs at one shape (``_recurring``). ``rows[i]`` has ``outputs``, ``reference``
    (float64), and optionally ``native`` (the parent's native-precision reference),
    ``expected_dtypes`` (the worker's, used only without ``native``), ``fresh`` (``outputs``,
    ``reference``, ``native``) and ``rerun`` (outputs)."""
    scored, draws = 0, {}
    for j, (t, row) in enumerate(zip(plan, rows)):
        summary = {k: t[k] for k in ("shape", "distribution", "order", "layout", "hidden") if k in t}
        outs, refs, natives = row["outputs"], row["reference"], row.get("native")
        dtypes = _dtypes(row.get("expected_dtypes") or [], natives)
        if len(outs) != len(refs):
            v.trials.append({**summary, "ok": False, "reason": f"{len(outs)} outputs, expected {len(refs)}"})
            v.stage = Stage.INCORRECT
            return False
        if not _finite(refs):
            v.trials.append({**summary, "ok": True, "scored": False,
                             "reason": "not scored: the reference is not finite on these inputs"})
            continue
        scored += 1
        checks = [_compare(spec, o, r, d, device, n, i)
                  for i, (o, r, d, n) in enumerate(zip(outs, refs, dtypes, _natives(natives, len(refs))))]
        bad = next((c for c in checks if not c["ok"]), None)
        v.trials.append({
            **summary, "ok": bad is None, "reason": bad["reason"] if bad else "",
            "max_err_ratio": max(c["max_err_ratio"] for c in checks),
            "quantile_err_ratio": max(c["quantile_err_ratio"] for c in checks),
            "rel_l2": max(c["rel_l2"] for c in checks),
            "rel_l2_bound": min(c["rel_l2_bound"] for c in checks),
        })
        if bad is not None:
            v.stage = Stage.INCORRECT
            return False
        fresh_checks: list[dict] = []
        failure = _repeats(spec, t, row, rows[:j], dtypes, device, fresh_checks)
        if failure is not None:
            code, violation, message = failure
            if violation:
                v.violations.append(Violation(code, message))
                v.stage = Stage.REJECTED
            else:
                v.stage, v.error = Stage.INCORRECT, message
            return False
        _keep_draws(draws, t, outs, checks)
        if "fresh" in row:
            _keep_draws(draws, t, row["fresh"]["outputs"], fresh_checks)
    if scored == 0:
        v.stage, v.error = Stage.INCORRECT, NO_FINITE_REFERENCE
        return False
    recurring = _recurring(draws)
    if recurring:
        v.stage, v.error = Stage.INCORRECT, recurring
        return False
    return True


def check_kept(spec: TaskSpec, kept: list[dict], dtypes: list[str], device: str) -> tuple[list[Violation], str]:
    """Check the outputs kept from the timed loop against their references (``kept[i]`` has
    ``outputs``, ``reference`` and optionally ``native``, and ``others``: ``(label, outputs)``
    answers for other timing inputs, from ``references.kept_references``); ``dtypes`` are the
    expected output dtypes, replaced by the native reference's where a row has one. A kept output
    is stale when it matches the answer for another kept iteration's inputs (their reference or
    the candidate's output there) or for one of its row's ``others``. Returns ``(violations,
    incorrect)``: ``stale_timed_output`` violations, and the first incorrect message ("" when
    none)."""
    violations: list[Violation] = []
    incorrect = ""
    for i, row in enumerate(kept):
        others = list(row.get("others") or [])
        for j, other in enumerate(kept):
            if j != i:
                others += [(f"timed iteration {j}'s inputs", other["reference"]),
                           (f"timed iteration {j}'s inputs (the candidate's own output there)", other["outputs"])]
        failure = repeat_failure(
            spec, row["outputs"], row["reference"], dtypes, device,
            f"timed iteration {i}'s output does not match its inputs", f"fresh inputs (timed iteration {i})",
            row.get("native"), others,
        )
        if failure is None:
            continue
        violation, message = failure
        if violation:
            violations.append(Violation("stale_timed_output", message))
        elif not incorrect:
            incorrect = message
    return violations, incorrect


__all__ = ["BORDERLINE_L2", "NO_FINITE_REFERENCE", "check_kept", "check_trials", "first_failure", "repeat_failure"]
