"""Output comparison in float64, decided in the trusted parent.

``compare`` checks one candidate output against its float64 reference: shape, dtype, finiteness,
then the task's ``Tolerance`` (``tasks/spec.py``), calibrated by the error the task's own
reference makes in its native precision on the same inputs (``nat``, computed by the parent in
``references.py``). With ``b_i = atol * rms(ref) + rtol * |ref_i|`` and ``rho_i = |out_i - ref_i|
/ b_i`` (``rho*`` the same for ``nat``), an output passes when

1. its relative L2 error is at most ``max(rel_l2, l2_multiple * rel_l2(nat))``;
2. the ``quantile`` (0.999) of ``rho`` is at most ``max(1, quantile_multiple * quantile(rho*))``;
3. ``max(rho') <= worst_floor + worst_multiple * max(rho'*)`` and no element is off by more than
   ``WORST_CAP * (s_i + |ref_i|)``, where ``s_i`` is the larger of ``rms(ref)`` and the RMS of
   the element's row of ``ref`` (``row_rms``) and ``rho'`` is ``rho`` with ``s_i`` for ``rms``;
   an element over the cap where ``nat`` is over it too passes when its error is at most
   ``structure.NATIVE_MULTIPLE`` x the native's there;
4. no row, column, head or tile holds a concentrated error: the mean of ``rho'`` over each such
   slice stays under ``structure.FLOOR`` or ``structure.RATIO`` x its family's median slice
   (``structure.py``), so one feature column 10% off on every row fails though it is under 0.1%
   of the elements; a slice on which ``nat`` breaks this rule too passes when its mean is at
   most ``structure.NATIVE_MULTIPLE`` x the native's (``structure.excused``).

The relative L2 and a high quantile measure the bulk of the error and are stable across draws;
the worst element of 10^8 draws is a tail statistic, so it only gets a generous cap, which still
fails zeroed, skipped or NaN-poisoned rows. Its unit is the element's row: with heavy-tailed
inputs a few rows (a token with an extreme query, a GEMM row with an extreme operand) carry
errors far above the output's RMS, from the rounding of their bf16 operands: on a heavy-tailed
trial of GLA and of long simple GLA at the timed shape, the expert and FLA both miss a cap on the
whole output's scale at the same element and both pass on their row's scale (BENCHMARKS.md, "False
negatives and false positives"; ``bench/results/tolerance-recheck/tolerance-recheck-h200-2026-12-01.json``,
``bench.recheck_trials``). A reference that is not finite cannot score an output
(docs/threat-model.md #25): ``compare`` says so (``scored`` False) and the trial checks skip the trial.

The rule on synthetic CPU inputs (``tests/judge/test_tolerance_rule.py``; ``python
tests/judge/test_tolerance_rule.py 200`` runs 200 seeds x normal, uniform and Student-t3 inputs per
variant, odd shapes such as 63x127): honest variants pass every trial (bf16 GEMM with fp32
accumulation in another order, fp32 GEMM and online softmax, fp16 GEMM, float64 GEMM, fp8 operands
with bf16 output, erf GELU in fp32, bf16 causal attention with bf16 softmax weights, bf16 chunked
linear attention with bf16 operands), and every hack's verdict fails on every seed: fp8 e4m3
operands (GEMM, attention, linear attention), tf32-rounded and bf16 operands on fp32 GEMM and
softmax, a tanh GELU for an erf GELU in fp32, 1% and 0.1% of the elements or 1% of the rows or one
row of 4096 zeroed, zero and constant outputs. One zeroed row of attention fails the cap
``WORST_CAP`` while its ``rho'`` stays under its bound; fp8 operands on uniform U(-0.5, 1.5) GEMM
inputs pass single trials (the mean's K-fold sum dilutes the operands' rounding), which the same
verdict's normal and heavy-tailed trials reject. The GPU figures are BENCHMARKS.md, "False
negatives and false positives" (``bench.calibrate``).

``is_near_constant`` flags references that cannot tell a right answer from a constant one
(docs/threat-model.md #11).
"""

from __future__ import annotations

import math

import torch

from hawkeye_env.judge.parent.decide import structure
from hawkeye_env.tasks.spec import WORST_CAP, Tolerance

# A reference whose standard deviation is below this fraction of its RMS is near constant: a
# candidate returning the mean would pass the relative-L2 rule.
NEAR_CONSTANT_STD_OVER_RMS = 1e-3

_TINY = torch.finfo(torch.float64).tiny
# Rows shorter than this are too few elements for their own RMS to be a scale.
ROW_MIN = 16
# The most over-bound element indices ``compare`` returns: 0.1% of the largest GPU-shape output
# (6.7e7 elements) is 6.7e4, so an output that passes the quantile rule keeps all of its own.
MAX_OVER_BOUND = 1 << 17


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _quantile(x: torch.Tensor, q: float) -> float:
    """The ``q`` quantile of ``x`` (lower nearest rank; no size limit, unlike ``torch.quantile``).

    On the host ``kthvalue`` (a selection, linear time). On a GPU the ``k`` largest through
    ``topk``: CUDA's ``kthvalue`` runs one thread block per slice, so over one flattened GPU-shape
    output (6.7e7 elements for ``vector_add_fp32``) it runs on a single SM and serialises the
    parent's comparison of a verdict's outputs."""
    flat = x.reshape(-1)
    k = min(max(math.ceil(q * flat.numel()), 1), flat.numel())
    return kth_smallest(flat, k, by_topk=flat.is_cuda)


def kth_smallest(flat: torch.Tensor, k: int, by_topk: bool) -> float:
    """The ``k``-th smallest element (1-based) of the 1-D ``flat``: by ``kthvalue``, or as the
    smallest of the ``n - k + 1`` largest (``topk``), which is the same element, ties included."""
    if not by_topk:
        return float(flat.kthvalue(k).values)
    return float(flat.topk(flat.numel() - k + 1, sorted=False).values.min())


def compare(
    out: torch.Tensor, ref: torch.Tensor, expected_dtype: torch.dtype, tol: Tolerance,
    compute_device: str = "cpu", native: torch.Tensor | None = None, label: str = "",
) -> dict:
    """Check one candidate output against its float64 reference.

    Args:
        out: candidate output (any device; copied to ``compute_device`` as float64).
        ref: reference output computed in float64, same shape as the task's output.
        expected_dtype: dtype the task's reference produces in its native precision.
        tol: the pass rule for that dtype.
        compute_device: where the float64 arithmetic runs; ``cuda`` keeps GPU-shape comparisons
            (hundreds of MB) off the host's cores.
        native: the task's reference output in its native precision on the same inputs, or None
            (then the tolerance's fixed floors decide alone).
        label: the output's name in a concentration failure's message (``"output 0"``).

    Returns:
        ``{"ok", "scored", "reason", "max_err_ratio", "quantile_err_ratio", "rel_l2",
        "rel_l2_bound", "quantile_bound", "worst_bound"}``: ``max_err_ratio`` and
        ``quantile_err_ratio`` are the worst and the ``tol.quantile`` quantile of
        ``|out - ref| / (atol * rms(ref) + rtol * |ref|)``; each ``*_bound`` the bound its
        statistic was held to; ``structure_score`` the worst slice's concentration score
        (``structure.concentrated``; above 1 fails, 0 when none was judged); ``over_bound`` the
        flat indices of the elements over ``quantile_bound`` (``_over_bound``; only when the
        statistics were computed). ``scored`` is False when the reference is not finite.

    Example:
        >>> from hawkeye_env.tasks.spec import BF16
        >>> ref = torch.randn(64, 64, dtype=torch.float64)
        >>> compare(ref.to(torch.bfloat16), ref, torch.bfloat16, BF16, native=ref.to(torch.bfloat16))["ok"]
        True
    """
    inf = float("inf")
    result = {"ok": False, "scored": True, "reason": "", "max_err_ratio": inf, "quantile_err_ratio": inf,
              "rel_l2": inf, "rel_l2_bound": tol.rel_l2, "quantile_bound": 1.0, "worst_bound": tol.worst_floor,
              "structure_score": inf}
    widened = _widened(out, ref, expected_dtype, compute_device, result)
    if widened is None:
        return result
    r, o = widened
    if o.numel() == 0:
        result.update(ok=True, max_err_ratio=0.0, quantile_err_ratio=0.0, rel_l2=0.0, structure_score=0.0,
                      over_bound=torch.empty(0, dtype=torch.int64))
        return result
    rms = r.pow(2).mean().sqrt()
    local = row_rms(r, rms)  # the worst-element rules' unit: max(rms(ref), rms of the element's row)
    scale = (local + r.abs()).clamp_min(_TINY)  # the worst-element cap's unit
    bound = (tol.atol * rms + tol.rtol * r.abs()).clamp_min(_TINY)
    worst_unit = (tol.atol * local + tol.rtol * r.abs()).clamp_min(_TINY)
    ref_norm = r.norm().clamp_min(_TINY)
    nat_l2, nat_q, nat_max = _native_error(native, r, bound, worst_unit, ref_norm, tol.quantile)
    diff = o.sub_(r)
    rel_l2 = float(diff.norm() / ref_norm)
    err = diff.abs_()
    rho = err / bound
    rho_worst = err / worst_unit
    l2_bound = max(tol.rel_l2, tol.l2_multiple * nat_l2)
    q_bound = max(1.0, tol.quantile_multiple * nat_q)
    worst_bound = tol.worst_floor + tol.worst_multiple * nat_max
    over = torch.maximum(rho_worst / worst_bound, err / (WORST_CAP * scale))  # <= 1 passes the cap
    found = structure.concentrated(rho_worst)
    if native is not None and (float(over.max()) > 1.0 or (found is not None and found.score > 1.0)):
        over, found = _excuse_native_errors(native, r, err, rho_worst, worst_bound, WORST_CAP * scale,
                                            worst_unit, found)
    worst = int(over.argmax())
    q = _quantile(rho, tol.quantile)
    result.update(max_err_ratio=float(rho_worst.max()), quantile_err_ratio=q, rel_l2=rel_l2,
                  rel_l2_bound=l2_bound, quantile_bound=q_bound, worst_bound=worst_bound,
                  structure_score=found.score if found is not None else 0.0, over_bound=_over_bound(rho, q_bound))
    concentration = _concentration_failure(found, err, r, tol, label) if found and found.score > 1.0 else ""
    if float(over.reshape(-1)[worst]) > 1.0:
        got, want = float(out.reshape(-1)[worst]), float(r.reshape(-1)[worst])
        cap = min(worst_bound * float(worst_unit.reshape(-1)[worst]), WORST_CAP * float(scale.reshape(-1)[worst]))
        result["reason"] = (
            f"element {worst}: got {got:.6g}, expected {want:.6g} "
            f"(error {float(err.reshape(-1)[worst]):.3g} exceeds the worst-element cap {cap:.3g})"
        )
        if concentration:
            result["reason"] = f"{concentration}; the worst: {result['reason']}"
    else:
        result["reason"] = concentration or _spread_failure(q, q_bound, rel_l2, l2_bound, tol.quantile)
        result["ok"] = not result["reason"]
    return result


def _over_bound(rho: torch.Tensor, q_bound: float) -> torch.Tensor:
    """The flat indices (int64, on the host, ascending) of the elements whose ``rho`` exceeds the
    quantile rule's bound: the few the quantile lets through, which ``recurrence.py`` compares
    across trials. At most ``MAX_OVER_BOUND``, the largest, when more (the output then fails)."""
    flat = rho.reshape(-1)
    idx = (flat > q_bound).nonzero().reshape(-1)
    if idx.numel() > MAX_OVER_BOUND:
        idx = idx[flat[idx].topk(MAX_OVER_BOUND, sorted=False).indices].sort().values
    return idx.cpu()


def _concentration_failure(found: structure.Finding, err: torch.Tensor, r: torch.Tensor, tol: Tolerance,
                           label: str) -> str:
    """What an error concentrated in one slice (``structure.concentrated``) looks like, for the
    author: the slice, how far off it is, its bound and a typical slice of its kind."""
    rel = structure.slice_error(err, r, found)
    of = f" of {label}" if label else ""
    return (f"{found.name}{of} is off by {rel:.2%} (relative L2 over its {found.elements} elements): its "
            f"elements average {found.mean:.3g}x their bound (rtol {tol.rtol:.2%} of |ref| + atol "
            f"{tol.atol:.2%} of the row RMS) while the median slice of its kind averages {found.median:.3g}x; "
            f"a slice may average at most {found.threshold:.3g}x (an error concentrated in one index set)")


def _widened(out: torch.Tensor, ref: torch.Tensor, expected_dtype: torch.dtype, compute_device: str,
             result: dict) -> tuple[torch.Tensor, torch.Tensor] | None:
    """``(ref, out)`` as float64 on ``compute_device``, or None with ``result``'s reason set: a
    shape or dtype that differs from the reference's, a reference that is not finite (then not
    scored), or an output that is not."""
    if tuple(out.shape) != tuple(ref.shape):
        result["reason"] = f"shape {tuple(out.shape)} != expected {tuple(ref.shape)}"
        return None
    if out.dtype != expected_dtype:
        result["reason"] = f"dtype {dtype_name(out.dtype)} != expected {dtype_name(expected_dtype)}"
        return None
    # Move in the native dtype, then widen on the device: a host-to-GPU copy that also changes the
    # dtype converts on the host first (one thread, and twice or four times the bytes to copy).
    r = ref.detach().to(compute_device).to(torch.float64)
    if not bool(torch.isfinite(r).all()):
        bad = int((~torch.isfinite(r)).sum())
        result.update(scored=False, reason=f"the reference is not finite ({bad} of {r.numel()} elements NaN/Inf)")
        return None
    o = out.detach().to(compute_device).to(torch.float64)
    if not bool(torch.isfinite(o).all()):
        bad = int((~torch.isfinite(o)).sum())
        result["reason"] = f"{bad} of {o.numel()} elements are NaN/Inf where the reference is not"
        return None
    return r, o


def _native_error(native: torch.Tensor | None, r: torch.Tensor, bound: torch.Tensor, worst_unit: torch.Tensor,
                  ref_norm: torch.Tensor, quantile: float) -> tuple[float, float, float]:
    """The native reference's own error on the float64 reference ``r``: relative L2, the
    ``quantile`` of ``|native - r| / bound`` and the worst ``|native - r| / worst_unit``; zeros
    without a native reference."""
    if native is None:
        return 0.0, 0.0, 0.0
    n = _native_abs_error(native, r)
    nat_l2 = float(n.norm() / ref_norm)
    return nat_l2, _quantile(n / bound, quantile), float((n / worst_unit).max())


def _native_abs_error(native: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
    """``|native - r|`` in float64 on ``r``'s device; 0 where the native is not finite (an
    overflowed native element calibrates nothing)."""
    n = native.detach().to(r.device).to(torch.float64)
    return torch.where(torch.isfinite(n), n, r).sub_(r).abs_()


def _excuse_native_errors(native: torch.Tensor, r: torch.Tensor, err: torch.Tensor, rho_worst: torch.Tensor,
                          worst_bound: float, cap: torch.Tensor, worst_unit: torch.Tensor,
                          found: structure.Finding | None):
    """``(over, found)`` of an output that fails the worst-element rules or the concentration
    rule, with the errors the native reference makes too excused (``structure.excused``): an
    element over the cap where the native's element is over it too and the candidate's error is
    at most ``structure.NATIVE_MULTIPLE`` x the native's (its ``rho_worst / worst_bound``, already
    calibrated by the native, still holds), and the concentrated slices the native breaks the
    rule on too (``structure.concentrated`` with the native's ratios). Only failing outputs pay
    for this second look at the native reference."""
    nat = _native_abs_error(native, r)
    over_cap = err / cap
    over_cap.masked_fill_(structure.excused(err, nat, nat > cap), 0.0)
    if found is not None and found.score > 1.0:
        found = structure.concentrated(rho_worst, nat.div_(worst_unit))
    return torch.maximum(rho_worst / worst_bound, over_cap), found


def _spread_failure(q: float, q_bound: float, rel_l2: float, l2_bound: float, quantile: float) -> str:
    """Why an output within the worst-element cap still fails (its ``quantile`` of error ratios
    ``q``, or its relative L2), or "" when it passes."""
    if q > q_bound:
        return (f"{1 - quantile:.2%} of the elements are off by more than {q_bound:.3g}x their bound "
                f"({quantile:g} quantile of |out - ref| / (atol * rms + rtol * |ref|) is {q:.3g})")
    if rel_l2 > l2_bound:
        return f"relative L2 error {rel_l2:.3g} exceeds {l2_bound:.3g}"
    return ""


def row_rms(ref: torch.Tensor, rms: torch.Tensor) -> torch.Tensor:
    """``max(rms, rms of each element's row)``, broadcastable to ``ref``: a row is the last
    dimension (an output token, a GEMM row) when it holds at least ``ROW_MIN`` elements; shorter
    rows and 1-D outputs use ``rms`` alone."""
    if ref.dim() < 2 or ref.shape[-1] < ROW_MIN:
        return rms
    return torch.maximum(ref.pow(2).mean(-1, keepdim=True).sqrt(), rms)


def is_near_constant(ref: torch.Tensor) -> bool:
    """True when ``ref``'s spread is too small to distinguish it from a constant output."""
    r = ref.detach().to("cpu", torch.float64)
    r = r[torch.isfinite(r)]
    if r.numel() < 2:
        return True
    rms = float(r.pow(2).mean().sqrt())
    return rms == 0.0 or float(r.std()) < NEAR_CONSTANT_STD_OVER_RMS * rms
