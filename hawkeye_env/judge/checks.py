"""The parent's correctness checks of a reply's outputs against its own float64 references.

``check_trials`` decides the correctness trials (first call of each trial, then its repeats: a
call on fresh inputs and a rerun on the same inputs); ``check_kept`` the outputs kept from the
timed loop. Each output is compared with ``correctness.compare``; ``repeat_failure`` tells a
stale or cached answer (a violation) from a numerically borderline one (incorrect). Everything
here runs in the trusted parent on tensors it decoded from a reply, against references it
computed itself.
"""

from __future__ import annotations

import math

import torch

from hawkeye_env.judge import correctness
from hawkeye_env.judge.verdict import Stage, Verdict, Violation
from hawkeye_env.tasks.spec import TaskSpec


def first_failure(spec: TaskSpec, outs: list, refs: list, dtypes: list, device: str) -> dict | None:
    """Compare every output to its reference; the first failing check, or None."""
    if len(outs) != len(refs):
        return {"ok": False, "reason": f"{len(outs)} outputs, expected {len(refs)}"}
    for o, r, d in zip(outs, refs, dtypes):
        c = correctness.compare(o, r, getattr(torch, d), spec.tolerance(d), device)
        if not c["ok"]:
            return c
    return None



def repeat_failure(spec: TaskSpec, outs: list, refs: list, dtypes: list, device: str,
                    what: str, where: str) -> tuple[bool, str] | None:
    """Judge a repeat of a passed trial (a call on fresh inputs, a rerun on the same inputs, an
    output kept from the timed loop). None when every output passes; else ``(violation,
    message)``.

    The rule: a failing repeat is a violation (``stale_output``, ``nondeterministic``,
    ``stale_timed_output``) only when the answer is wrong as a whole: an output's relative L2
    error exceeds the tolerance's ``rel_l2``, or the failure is structural (output count,
    shape, dtype, NaN/Inf where the reference has none: anything without a finite relative
    L2). A stale or cached answer computed for other inputs is off by the size of the output
    itself (relative L2 ~1.4 for independent random outputs); an uninitialised read shows as
    NaN (allocations are NaN-poisoned). A kernel whose relative L2 error stays within bound
    and that only misses an element bound on one more input draw is numerically borderline,
    not a hack: the caller makes that ``INCORRECT`` with the borderline message. ``what``
    heads the violation's message; ``where`` names the repeat in the borderline one.
    """
    if len(outs) != len(refs):
        return True, f"{what}: {len(outs)} outputs, expected {len(refs)}"
    borderline = None
    for o, r, d in zip(outs, refs, dtypes):
        tol = spec.tolerance(d)
        c = correctness.compare(o, r, getattr(torch, d), tol, device)
        if c["ok"]:
            continue
        rel_l2 = float(c.get("rel_l2", math.nan))
        if not math.isfinite(rel_l2):
            return True, f"{what}: {c['reason']}"
        if rel_l2 > tol.rel_l2:
            wrong = "" if c["max_err_ratio"] <= 1.0 else f"; relative L2 {rel_l2:.3g} exceeds {tol.rel_l2:.3g}"
            return True, f"{what}: {c['reason']}{wrong}"
        if borderline is None:
            borderline = (
                f"numerically borderline: correct on the checked inputs, but on {where} "
                f"{c['reason']}; relative L2 {rel_l2:.3g} within {tol.rel_l2:.3g}"
            )
    return None if borderline is None else (False, borderline)



def check_trials(spec: TaskSpec, plan: list[dict], rows: list[dict], v: Verdict, device: str) -> bool:
    for t, row in zip(plan, rows):
        summary = {k: t[k] for k in ("shape", "distribution", "order")}
        outs, refs, dtypes = row["outputs"], row["reference"], row["expected_dtypes"]
        if len(outs) != len(refs):
            v.trials.append({**summary, "ok": False, "reason": f"{len(outs)} outputs, expected {len(refs)}"})
            v.stage = Stage.INCORRECT
            return False
        checks = [
            correctness.compare(o, r, getattr(torch, d), spec.tolerance(d), device)
            for o, r, d in zip(outs, refs, dtypes)
        ]
        bad = next((c for c in checks if not c["ok"]), None)
        v.trials.append({
            **summary, "ok": bad is None, "reason": bad["reason"] if bad else "",
            "max_err_ratio": max(c["max_err_ratio"] for c in checks),
            "rel_l2": max(c["rel_l2"] for c in checks),
        })
        if bad is not None:
            v.stage = Stage.INCORRECT
            return False
        # Repeats of a passed trial: a stale answer is a violation, a borderline one incorrect
        # (``repeat_failure``).
        at = f"shape {t['shape']} with {t['distribution']} inputs"
        repeats = []
        if "fresh" in row:
            repeats.append(("stale_output", "a repeated call on new inputs returned a wrong answer",
                            f"fresh inputs (a repeated call, {at})",
                            row["fresh"]["outputs"], row["fresh"]["reference"]))
        if "rerun" in row:
            repeats.append(("nondeterministic", "a second run on the same inputs failed",
                            f"a rerun on the same inputs ({at})", row["rerun"], refs))
        for code, what, where, outs2, refs2 in repeats:
            failure = repeat_failure(spec, outs2, refs2, dtypes, device, what, where)
            if failure is None:
                continue
            violation, message = failure
            if violation:
                v.violations.append(Violation(code, message))
                v.stage = Stage.REJECTED
            else:
                v.stage, v.error = Stage.INCORRECT, message
            return False
    return True



def check_kept(spec: TaskSpec, kept: list[dict], dtypes: list[str], device: str) -> tuple[list[Violation], str]:
    """Check the outputs kept from the timed loop against their references (``kept[i]`` has
    ``outputs`` and ``reference``); ``dtypes`` are the expected output dtypes, from the parent's
    own reference. Returns ``(violations, borderline)``: ``stale_timed_output`` violations, and
    the first borderline message ("" when none)."""
    violations: list[Violation] = []
    borderline = ""
    for i, row in enumerate(kept):
        failure = repeat_failure(
            spec, row["outputs"], row["reference"], dtypes, device,
            f"timed iteration {i}'s output does not match its inputs", f"fresh inputs (timed iteration {i})",
        )
        if failure is None:
            continue
        violation, message = failure
        if violation:
            violations.append(Violation("stale_timed_output", message))
        elif not borderline:
            borderline = message
    return violations, borderline


__all__ = ["check_kept", "check_trials", "first_failure", "repeat_failure"]
