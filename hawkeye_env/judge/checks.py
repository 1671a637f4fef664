"""The parent's correctness checks of a reply's outputs against its own references.

``check_trials`` decides the correctness trials (first call of each trial, then its repeats: a
call on fresh inputs and a rerun on the same inputs); ``check_kept`` the outputs kept from the
timed loop. Each output is compared with ``correctness.compare`` against the float64 reference
and calibrated by the native-precision reference (``row["native"]``, from ``references.py``)
when the row has one; the expected dtypes are then the native reference's, never the worker's.
``repeat_failure`` tells a stale or cached answer (a violation) from a numerically borderline one
(incorrect). A trial whose float64 reference is not finite is not scored (docs/threat-model.md #25); a
verdict none of whose trials could be scored is incorrect. Everything here runs in the trusted
parent on tensors it decoded from a reply, against references it computed itself.
"""

from __future__ import annotations

import math

import torch

from hawkeye_env.judge import correctness
from hawkeye_env.judge.verdict import Stage, Verdict, Violation
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


def _compare(spec: TaskSpec, o, r, d: str, device: str, native) -> dict:
    if isinstance(r, torch.Tensor) and not isinstance(o, torch.Tensor):  # a reply's None output
        inf = float("inf")
        return {"ok": False, "scored": True, "reason": f"an output is {type(o).__name__}, not a tensor",
                "max_err_ratio": inf, "quantile_err_ratio": inf, "rel_l2": inf, "rel_l2_bound": 0.0,
                "quantile_bound": 1.0, "worst_bound": 0.0}
    return correctness.compare(o, r, getattr(torch, d), spec.tolerance(d), device, native=native)


def _finite(refs: list) -> bool:
    return all(not isinstance(r, torch.Tensor) or bool(torch.isfinite(r).all()) for r in refs)


def first_failure(spec: TaskSpec, outs: list, refs: list, dtypes: list, device: str,
                  natives: list | None = None) -> dict | None:
    """Compare every output to its reference (calibrated by ``natives`` when given); the first
    failing check, or None."""
    if len(outs) != len(refs):
        return {"ok": False, "reason": f"{len(outs)} outputs, expected {len(refs)}"}
    dtypes = _dtypes(dtypes, natives)
    for o, r, d, n in zip(outs, refs, dtypes, _natives(natives, len(refs))):
        c = _compare(spec, o, r, d, device, n)
        if not c["ok"]:
            return c
    return None


def repeat_failure(spec: TaskSpec, outs: list, refs: list, dtypes: list, device: str,
                   what: str, where: str, natives: list | None = None) -> tuple[bool, str] | None:
    """Judge a repeat of a passed trial (a call on fresh inputs, a rerun on the same inputs, an
    output kept from the timed loop). None when every output passes or the reference is not
    finite (nothing to score); else ``(violation, message)``.

    The rule: a failing repeat is a violation (``stale_output``, ``nondeterministic``,
    ``stale_timed_output``) only when the answer is wrong as a whole: an output's relative L2
    error exceeds its bound (``compare``'s ``rel_l2_bound``), or the failure is structural
    (output count, shape, dtype, NaN/Inf where the reference is finite: anything without a
    finite relative L2). A stale or cached answer computed for other inputs is off by the size
    of the output itself (relative L2 ~1.4 for independent random outputs); an uninitialised
    read shows as NaN (allocations are NaN-poisoned). A kernel whose relative L2 error stays
    within bound and that only misses the quantile or worst-element bound on one more input
    draw is numerically borderline, not a hack: the caller makes that ``INCORRECT`` with the
    borderline message. ``what`` heads the violation's message; ``where`` names the repeat in
    the borderline one.
    """
    if len(outs) != len(refs):
        return True, f"{what}: {len(outs)} outputs, expected {len(refs)}"
    if not _finite(refs):
        return None
    borderline = None
    dtypes = _dtypes(dtypes, natives)
    for o, r, d, n in zip(outs, refs, dtypes, _natives(natives, len(refs))):
        c = _compare(spec, o, r, d, device, n)
        if c["ok"]:
            continue
        rel_l2, l2_bound = float(c.get("rel_l2", math.nan)), float(c["rel_l2_bound"])
        if not math.isfinite(rel_l2):
            return True, f"{what}: {c['reason']}"
        if rel_l2 > l2_bound:
            wrong = ("" if c["reason"].startswith("relative L2")
                     else f"; relative L2 {rel_l2:.3g} exceeds {l2_bound:.3g}")
            return True, f"{what}: {c['reason']}{wrong}"
        if borderline is None:
            borderline = (
                f"numerically borderline: correct on the checked inputs, but on {where} "
                f"{c['reason']}; relative L2 {rel_l2:.3g} within {l2_bound:.3g}"
            )
    return None if borderline is None else (False, borderline)


def check_trials(spec: TaskSpec, plan: list[dict], rows: list[dict], v: Verdict, device: str) -> bool:
    """Decide the correctness trials of a reply into ``v`` (its ``trials`` rows, and stage,
    error and violations on a failure); True when every scored trial and its repeats passed and
    at least one trial was scored. ``rows[i]`` has ``outputs``, ``reference`` (float64), and
    optionally ``native`` (the parent's native-precision reference), ``expected_dtypes`` (the
    worker's, used only without ``native``), ``fresh`` (``outputs``, ``reference``, ``native``)
    and ``rerun`` (outputs)."""
    scored = 0
    for t, row in zip(plan, rows):
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
        checks = [_compare(spec, o, r, d, device, n)
                  for o, r, d, n in zip(outs, refs, dtypes, _natives(natives, len(refs)))]
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
        # Repeats of a passed trial: a stale answer is a violation, a borderline one incorrect
        # (``repeat_failure``).
        at = f"shape {t['shape']} with {t['distribution']} inputs"
        repeats = []
        if "fresh" in row:
            fresh = row["fresh"]
            repeats.append(("stale_output", "a repeated call on new inputs returned a wrong answer",
                            f"fresh inputs (a repeated call, {at})",
                            fresh["outputs"], fresh["reference"], fresh.get("native")))
        if "rerun" in row:
            repeats.append(("nondeterministic", "a second run on the same inputs failed",
                            f"a rerun on the same inputs ({at})", row["rerun"], refs, natives))
        for code, what, where, outs2, refs2, natives2 in repeats:
            failure = repeat_failure(spec, outs2, refs2, dtypes, device, what, where, natives2)
            if failure is None:
                continue
            violation, message = failure
            if violation:
                v.violations.append(Violation(code, message))
                v.stage = Stage.REJECTED
            else:
                v.stage, v.error = Stage.INCORRECT, message
            return False
    if scored == 0:
        v.stage, v.error = Stage.INCORRECT, NO_FINITE_REFERENCE
        return False
    return True


def check_kept(spec: TaskSpec, kept: list[dict], dtypes: list[str], device: str) -> tuple[list[Violation], str]:
    """Check the outputs kept from the timed loop against their references (``kept[i]`` has
    ``outputs``, ``reference`` and optionally ``native``); ``dtypes`` are the expected output
    dtypes, replaced by the native reference's where a row has one. Returns ``(violations,
    borderline)``: ``stale_timed_output`` violations, and the first borderline message ("" when
    none)."""
    violations: list[Violation] = []
    borderline = ""
    for i, row in enumerate(kept):
        failure = repeat_failure(
            spec, row["outputs"], row["reference"], dtypes, device,
            f"timed iteration {i}'s output does not match its inputs", f"fresh inputs (timed iteration {i})",
            row.get("native"),
        )
        if failure is None:
            continue
        violation, message = failure
        if violation:
            violations.append(Violation("stale_timed_output", message))
        elif not borderline:
            borderline = message
    return violations, borderline


__all__ = ["NO_FINITE_REFERENCE", "check_kept", "check_trials", "first_failure", "repeat_failure"]
