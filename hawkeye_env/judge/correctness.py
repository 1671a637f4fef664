"""Output comparison in float64, decided in the trusted parent.

``compare`` checks shape, dtype, finiteness and the task's ``Tolerance`` for one output against a
float64 reference, and returns the worst errors so feedback can say by how much a kernel missed.
``is_near_constant`` flags references that cannot tell a right answer from a constant one
(REWARD_HACKS #11).
"""

from __future__ import annotations

import torch

from hawkeye_env.tasks.spec import Tolerance

# A reference whose standard deviation is below this fraction of its RMS is near constant: a
# candidate returning the mean would pass the relative-L2 rule.
NEAR_CONSTANT_STD_OVER_RMS = 1e-3


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def compare(
    out: torch.Tensor, ref: torch.Tensor, expected_dtype: torch.dtype, tol: Tolerance,
    compute_device: str = "cpu",
) -> dict:
    """Check one candidate output against its float64 reference.

    Args:
        out: candidate output (any device; copied to ``compute_device`` as float64).
        ref: reference output computed in float64, same shape as the task's output.
        expected_dtype: dtype the task's reference produces in its native precision.
        tol: the pass rule for that dtype.
        compute_device: where the float64 arithmetic runs; ``cuda`` keeps GPU-shape comparisons
            (hundreds of MB) off the host's cores.

    Returns:
        ``{"ok": bool, "reason": str, "max_err_ratio": float, "rel_l2": float}`` where
        ``max_err_ratio`` is the worst ``|out - ref| / (atol * rms(ref) + rtol * |ref|)`` (<= 1 passes).
    """
    result = {"ok": False, "reason": "", "max_err_ratio": float("inf"), "rel_l2": float("inf")}
    if tuple(out.shape) != tuple(ref.shape):
        result["reason"] = f"shape {tuple(out.shape)} != expected {tuple(ref.shape)}"
        return result
    if out.dtype != expected_dtype:
        result["reason"] = f"dtype {dtype_name(out.dtype)} != expected {dtype_name(expected_dtype)}"
        return result
    # Move in the native dtype, then widen on the device: a host-to-GPU copy that also changes the
    # dtype converts on the host first (one thread, and twice or four times the bytes to copy).
    o = out.detach().to(compute_device).to(torch.float64)
    r = ref.detach().to(compute_device).to(torch.float64)
    o_nan, r_nan, o_inf, r_inf = o.isnan(), r.isnan(), o.isinf(), r.isinf()
    if not (torch.equal(o_nan, r_nan) and torch.equal(o_inf, r_inf) and torch.equal(o[o_inf], r[r_inf])):
        bad = int(((o_nan != r_nan) | (o_inf != r_inf)).sum())
        result["reason"] = (
            f"{bad} of {o.numel()} elements are NaN/Inf where the reference is not, or the reverse"
        )
        return result
    finite = ~(o_nan | o_inf)
    o, r = o[finite], r[finite]
    if o.numel() == 0:
        result.update(ok=True, max_err_ratio=0.0, rel_l2=0.0)
        return result
    err = (o - r).abs()
    rms = r.pow(2).mean().sqrt()
    bound = tol.atol * rms + tol.rtol * r.abs()
    ratio = err / bound.clamp_min(torch.finfo(torch.float64).tiny)
    worst = int(ratio.argmax())
    rel_l2 = float((o - r).norm() / r.norm().clamp_min(torch.finfo(torch.float64).tiny))
    result.update(max_err_ratio=float(ratio[worst]), rel_l2=rel_l2)
    if result["max_err_ratio"] > 1.0:
        result["reason"] = (
            f"element {worst}: got {float(o[worst]):.6g}, expected {float(r[worst]):.6g} "
            f"(error {float(err[worst]):.3g} exceeds {float(bound[worst]):.3g})"
        )
    elif rel_l2 > tol.rel_l2:
        result["reason"] = f"relative L2 error {rel_l2:.3g} exceeds {tol.rel_l2:.3g}"
    else:
        result["ok"] = True
    return result


def is_near_constant(ref: torch.Tensor) -> bool:
    """True when ``ref``'s spread is too small to distinguish it from a constant output."""
    r = ref.detach().to("cpu", torch.float64)
    r = r[torch.isfinite(r)]
    if r.numel() < 2:
        return True
    rms = float(r.pow(2).mean().sqrt())
    return rms == 0.0 or float(r.std()) < NEAR_CONSTANT_STD_OVER_RMS * rms
