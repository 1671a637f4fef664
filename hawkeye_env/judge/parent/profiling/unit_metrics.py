"""Each unit's metric for a profiled candidate, beside the expert solution's, at the profile's shape.

A task's tags name the units that serve it (``units.units_for_tags``); each unit states one
profiling metric (``units/<unit>/meta.py``: ``Metric``). ``unit_metrics`` computes that metric for
the candidate's profile and for the expert's, from what the profile holds:

* ``achieved_tflops`` / ``achieved_tbps``: the task's FLOPs / bytes at the profile's shape over the
  summed Nsight Compute durations of the profiled forward's kernels (a GPU profile only; the unit's
  own figure is a launch-hidden CUDA-event median, so this one is indicative);
* ``lts__t_sector_hit_rate.pct``: the kernels' L2 hit rates, weighted by duration (a GPU profile);
* any other counter (``dram__bytes.sum``): not among the profile's Nsight Compute metrics
  (``sandboxed/replay/nsight.py``), said so.

Without a GPU every metric is timed or counted on a GPU, so none has a value; what the sm_90
machine code shows of each unit's strategy is given instead (``STATIC_FACTS``: the facts a unit's
strategy changes, such as TMA instructions for ``tma_descriptors`` or matrix instructions and FMAs
for the FP4 units), for the candidate and the expert, with the reason the metric needs a GPU.
Nothing here runs code: it reads two ``KernelProfile``s. Example::

    rows = unit_metrics(get_task("nvfp4_gemm_bf16"), candidate_profile, expert_profile)
    print("\\n".join(unit_lines(rows)))
"""

from __future__ import annotations

from hawkeye_env.judge.parent.profiling.report import KernelProfile
from hawkeye_env.judge.shared.mma_types import is_mma
from hawkeye_env.tasks.spec import TaskSpec
from units.lib.index import units_for_tags


def _total(field: str):
    return lambda ks: sum(sum((k.get(field) or {}).values()) for k in ks)


def _wide(field: str):
    """``"<128-bit> of <all>"`` accesses: 128-bit vector accesses are what coalesced code issues."""
    def count(ks):
        tables = [k.get(field) or {} for k in ks]
        return f"{sum(t.get('128', 0) for t in tables)} of {sum(sum(t.values()) for t in tables)}"
    return count


# Static facts of a list of compiled kernels (``validate/facts_check.py`` fields), by label.
FACTS = {
    "kernels launched": lambda ks: sum(k.get("launches", 1) or 1 for k in ks),
    "matrix instructions": lambda ks: sum(n for k in ks for op, n in (k.get("mma") or {}).items() if is_mma(op)),
    "FMA": lambda ks: sum(k.get("fma", 0) or 0 for k in ks),
    "TMA instructions": _total("tma"),
    "cp.async": _total("async_copies"),
    "128-bit global loads": _wide("global_loads"),
    "128-bit global stores": _wide("global_stores"),
    "global loads": _total("global_loads"),
    "global stores": _total("global_stores"),
    "instructions": lambda ks: sum(k.get("instructions", 0) or 0 for k in ks),
    "registers/thread": lambda ks: max((k.get("registers") or 0 for k in ks), default=0),
    "warps": lambda ks: max((k.get("num_warps") or 0 for k in ks), default=0),
    "stages": lambda ks: max((k.get("num_stages") or 0 for k in ks), default=0),
    "spill instructions": lambda ks: sum((k.get("spill_stores", 0) or 0) + (k.get("spill_loads", 0) or 0) for k in ks),
}
_GEMM = ("matrix instructions", "registers/thread")
_WARP_SPECIALIZED = ("warps", "registers/thread", "TMA instructions", "matrix instructions")
# Per unit, the static facts its strategy changes (each unit's README says why the strategy pays).
STATIC_FACTS: dict[str, tuple[str, ...]] = {
    "coalesced_access": ("128-bit global loads", "128-bit global stores", "instructions"),
    "row_reduction": ("kernels launched", "global loads", "instructions"),
    "online_softmax": ("kernels launched", "global loads", "instructions"),
    "epilogue_fusion": ("kernels launched", "global stores", "matrix instructions"),
    "grouped_tile_order": (*_GEMM, "instructions"),
    "software_pipelining": ("stages", "cp.async", "TMA instructions", "matrix instructions"),
    "tma_descriptors": ("TMA instructions", "cp.async", "matrix instructions"),
    "persistent_splitk": ("kernels launched", *_GEMM),
    "warp_specialization": _WARP_SPECIALIZED,
    "fp8_scaled_gemm": ("matrix instructions", "FMA", "registers/thread", "spill instructions"),
    "mxfp4_gemm": ("matrix instructions", "FMA", "instructions", "registers/thread"),
    "nvfp4_gemm": ("matrix instructions", "FMA", "instructions", "registers/thread"),
    "chunked_scan": ("kernels launched", *_GEMM),
    "ws_persistent_gemm": _WARP_SPECIALIZED,
    "ws_fp8_gemm": _WARP_SPECIALIZED,
    "ws_attention_fwd": _WARP_SPECIALIZED,
}
DEFAULT_FACTS = ("matrix instructions", "instructions", "registers/thread")
# Metrics computed from the task's own counts over the profiled kernels' durations.
TIMED = {"achieved_tflops": "flops", "achieved_tbps": "bytes_moved"}
L2_HIT_RATE = "lts__t_sector_hit_rate.pct"
NEEDS_GPU = "timed or counted on a GPU (CUDA events, Nsight Compute); this profile is a CPU cross-compile"


def _kernel_counters(p: KernelProfile) -> list[dict]:
    return [c for c in p.counters.get("kernels", []) if c.get("duration_us")]


def metric_value(spec: TaskSpec, metric_name: str, p: KernelProfile | None) -> tuple[float | None, str]:
    """``(value, "")`` of ``metric_name`` for profile ``p`` (module docstring), or ``(None, why)``."""
    if p is not None and p.device != "cuda":
        return None, NEEDS_GPU
    if p is None or not p.ok:
        return None, "not profiled"
    rows = _kernel_counters(p)
    if not rows:
        return None, p.counters.get("unavailable", "no Nsight Compute durations")
    seconds = sum(c["duration_us"] for c in rows) * 1e-6
    if metric_name in TIMED:
        return getattr(spec, TIMED[metric_name])(**p.shape) / seconds / 1e12, ""
    if metric_name == L2_HIT_RATE:
        hit = [c for c in rows if c.get("l2_hit_rate_pct") is not None]
        if hit:
            return sum(c["l2_hit_rate_pct"] * c["duration_us"] for c in hit) / sum(c["duration_us"] for c in hit), ""
        return None, "Nsight Compute gave no L2 hit rate"
    return None, f"{metric_name} is not among the profile's Nsight Compute metrics"


def static_facts(unit_name: str, p: KernelProfile | None) -> dict:
    """The ``STATIC_FACTS`` of ``unit_name`` read from ``p``'s compiled kernels (empty without them)."""
    if p is None or not p.ok:
        return {}
    kernels = [k for k in p.kernels if "error" not in k]
    return {label: FACTS[label](kernels) for label in STATIC_FACTS.get(unit_name, DEFAULT_FACTS)}


def unit_metrics(spec: TaskSpec, candidate: KernelProfile, expert: KernelProfile | None) -> list[dict]:
    """One row per runnable unit serving ``spec``'s tags: ``{"unit", "metric", "unit_of_measure",
    "higher_is_better", "candidate", "expert"`` (values or None), ``"passes"`` (the unit's pass rule,
    candidate against expert, or None), ``"why"`` (why a value is missing), ``"static":
    {"candidate", "expert"}``}."""
    rows = []
    for unit in units_for_tags(spec.tags):
        if unit.metric is None:
            continue
        mine, why = metric_value(spec, unit.metric.name, candidate)
        theirs, their_why = metric_value(spec, unit.metric.name, expert)
        passes = unit.metric.passes(mine, theirs) if mine is not None and theirs else None
        rows.append({"unit": unit.name, "metric": unit.metric.name, "unit_of_measure": unit.metric.unit,
                     "higher_is_better": unit.metric.higher_is_better, "candidate": mine, "expert": theirs,
                     "passes": passes, "why": why or their_why,
                     "static": {"candidate": static_facts(unit.name, candidate),
                                "expert": static_facts(unit.name, expert)}})
    return rows


def _value(x: float | None) -> str:
    return "?" if x is None else f"{x:.3g}"


def unit_lines(rows: list[dict]) -> list[str]:
    """The rows as text: per unit its metric for the candidate beside the expert's (or why it needs a
    GPU), then the static facts, candidate vs expert."""
    if not rows:
        return []
    lines = ["Unit metrics (units/<unit>/meta.py), the candidate vs the expert solution at this shape"
             + (f" (needs a GPU: each metric is {NEEDS_GPU}):" if any(r["why"] == NEEDS_GPU for r in rows) else ":")]
    for r in rows:
        head = f"- {r['unit']}, {r['metric']} ({r['unit_of_measure']}): "
        if r["candidate"] is not None or r["expert"] is not None:
            rule = "" if r["passes"] is None else f"; {'meets' if r['passes'] else 'misses'} the unit's pass rule"
            head += f"{_value(r['candidate'])} vs {_value(r['expert'])}{rule}"
        else:
            head += "needs a GPU" if r["why"] == NEEDS_GPU else f"not computed: {r['why']}"
        mine, theirs = r["static"]["candidate"], r["static"]["expert"]
        facts = "; ".join(f"{label} {mine.get(label, '?')} vs {theirs.get(label, '?')}" for label in (mine or theirs))
        lines.append(head + (f". From the sm_90 machine code: {facts}" if facts else ""))
    return lines


__all__ = ["FACTS", "NEEDS_GPU", "STATIC_FACTS", "metric_value", "static_facts", "unit_lines", "unit_metrics"]
