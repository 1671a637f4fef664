"""Every runnable unit: callables match the reference (poisoned outputs, odd shapes, 2 seeds), the
package has the standard files and README sections; the spec's pass rule, the context builder, the
harness, and the taxonomy contract (every strategy of the units issue has a unit)."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from hawkeye_env.observation import CONTEXT_BUDGET_CHARS
from hawkeye_env.tasks.registry import get_task
from hawkeye_env.units_verify import JUDGE_CHECKS, verify_cpu_in_subprocess
from units import Metric, get_unit, list_units, unit_context, units_for_tags
from units.lib.harness import SEEDS, check_case, check_unit_cpu
from units.lib.index import LIB_DIR, MORE_UNITS_HEADING, UNITS_DIR

RUNNABLE = list_units(include_on_paper=False)
RUNNABLE_IDS = [u.name for u in RUNNABLE]
# A unit package is any folder of units/ that is a Python package, but the infrastructure's.
PACKAGES = sorted(p.name for p in UNITS_DIR.iterdir() if (p / "__init__.py").exists() and p != LIB_DIR)
UNIT_FILES = ("README.md", "kernel.py", "naive.py", "reference.py", "meta.py")
README_SECTIONS = ("## Strategy", "## When it pays", "## How to call", "## How to splice it in",
                   "## Traps", "## Measured")
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"

# The taxonomy contract: each strategy of the units issue, and the words (after lower-casing and
# turning '-' and '_' into spaces) of which one must appear in some unit's name, title, strategy or
# tags, on-paper slots included.
TAXONOMY_CONTRACT = {
    "coalesced/vectorized access": ("coalesced", "vectorized"),
    "tiled tensor-core matmul with grouped order": ("grouped",),
    "software pipelining": ("pipelining",),
    "TMA descriptors": ("tma",),
    "persistent kernels": ("persistent",),
    "split-K": ("split k",),
    "warp specialization": ("warp specialization", "warp specialized"),
    "epilogue fusion": ("epilogue",),
    "online softmax": ("online softmax",),
    "chunked scan": ("chunked scan",),
    "reductions": ("reduction",),
    "fp8 GEMM scales": ("fp8",),
    "mxfp4": ("mxfp4",),
    "nvfp4": ("nvfp4",),
}


def test_poisoning_fills_empty_with_nan(poisoned):
    assert torch.empty(1000).isnan().all()
    assert torch.empty(37, 41, dtype=torch.bfloat16).isnan().all()


@pytest.mark.parametrize("role", ["solution", "naive"])
@pytest.mark.parametrize("unit", RUNNABLE, ids=RUNNABLE_IDS)
def test_callable_matches_reference(unit, role, poisoned):
    assert unit.cpu_shapes, f"{unit.name} has no cpu shapes"
    if DEVICE == "cpu" and unit.cpu_skip(role):
        pytest.skip(f"{unit.name} {role}: {unit.cpu_skip(role)}")
    cases = [check_case(unit, role, shape, seed, JUDGE_CHECKS, DEVICE) for shape in unit.cpu_shapes for seed in SEEDS]
    failed = [f"{c['shape']} seed {c['seed']}: {c['reason']}" for c in cases if not c["ok"]]
    assert not failed, f"{unit.name} {role}:\n" + "\n".join(failed)


@pytest.mark.parametrize("unit", RUNNABLE, ids=RUNNABLE_IDS)
def test_some_cpu_shape_is_not_a_power_of_two(unit):
    odd = [s for s in unit.cpu_shapes if any(v > 1 and v & (v - 1) for v in s.values())]
    assert odd, f"{unit.name}: every cpu shape is made of powers of two: {unit.cpu_shapes}"


@pytest.mark.parametrize("unit", RUNNABLE, ids=RUNNABLE_IDS)
def test_unit_declares_its_measurement(unit):
    assert unit.metric is not None and unit.metric.min_margin >= 1.0
    assert unit.gpu_shapes and unit.architecture in ("ampere+", "hopper")
    count = {"achieved_tbps": unit.bytes_moved, "achieved_tflops": unit.flops}.get(unit.metric.name)
    if unit.metric.name in ("achieved_tbps", "achieved_tflops"):
        assert count is not None and count(**unit.gpu_shapes[0]) > 0


@pytest.mark.parametrize("package", PACKAGES)
def test_package_has_the_unit_files(package):
    missing = [f for f in UNIT_FILES if not (UNITS_DIR / package / f).exists()]
    assert not missing, f"units/{package} lacks {missing}"


@pytest.mark.parametrize("package", PACKAGES)
def test_readme_has_the_sections(package):
    readme = UNITS_DIR / package / "README.md"
    lines = set(readme.read_text(encoding="utf-8").splitlines()) if readme.exists() else set()
    missing = [s for s in README_SECTIONS if s not in lines]
    assert not missing, f"units/{package}/README.md lacks {missing}"


def test_check_case_catches_broken_callables(poisoned):
    unit = get_unit("coalesced_access")
    shape = unit.cpu_shapes[0]
    for broken, why in [("_unwritten", "NaN"), ("_mutates_input", "mutated"), ("_wrong_scale", "element"),
                        ("_raises", "ValueError"), ("_wrong_dtype", "dtype")]:
        bad = dataclasses.replace(unit, naive=f"{__name__}:{broken}")
        case = check_case(bad, "naive", shape, 0, JUDGE_CHECKS)
        assert not case["ok"] and why in case["reason"], (broken, case["reason"])


def _unwritten(x, alpha):
    return torch.empty_like(x)


def _mutates_input(x, alpha):
    return x.mul_(alpha)


def _wrong_scale(x, alpha):
    return x * (alpha * 1.01)


def _raises(x, alpha):
    raise ValueError("no kernel")


def _wrong_dtype(x, alpha):
    return (x * alpha).double()


def test_check_unit_cpu_refuses_without_interpreter(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    with pytest.raises(RuntimeError, match="TRITON_INTERPRET"):
        check_unit_cpu(get_unit("coalesced_access"), JUDGE_CHECKS)


def test_verify_cpu_in_subprocess_reports_every_role():
    (report,) = verify_cpu_in_subprocess(["epilogue_fusion"])  # the quickest unit on CPU
    assert report["unit"] == "epilogue_fusion" and report["ok"], report
    unit = get_unit("epilogue_fusion")
    for role in ("solution", "naive", "reference"):
        assert len(report["results"][role]) == len(unit.cpu_shapes) * len(SEEDS)


def test_metric_higher_is_better():
    m = Metric("achieved_tbps", "TB/s", True, "test", min_margin=3.0)
    assert m.passes(0.99, 1.0) and m.passes(2.0, 1.0) and not m.passes(0.98, 1.0)
    assert m.beats(3.0, 1.0) and not m.beats(2.99, 1.0) and not m.beats(1.0, 3.0)


def test_metric_lower_is_better():
    m = Metric("dram__bytes_read.sum", "bytes", False, "test", min_margin=2.0)
    assert m.passes(1.0, 1.0) and m.passes(0.5, 1.0) and m.passes(1.0 / 0.99, 1.0)
    assert not m.passes(1.02, 1.0)
    assert m.beats(1.0, 2.0) and not m.beats(1.0, 1.99) and not m.beats(2.0, 1.0)


def test_unit_context_modes():
    tags = ("online_softmax",)
    assert unit_context(tags, "none", 10**7) == ""
    with pytest.raises(ValueError):
        unit_context(tags, "everything", 10**7)
    docs, units, full = (unit_context(tags, mode, 10**7) for mode in ("docs", "units", "full"))
    assert "units/online_softmax/README.md" in docs and "kernel.py" not in docs
    assert "units/online_softmax/kernel.py" in units and "naive.py" not in units
    assert "units/online_softmax/naive.py" in full and "units/online_softmax/reference.py" in full
    assert len(docs) < len(units) < len(full)


def test_unit_context_respects_budget():
    """Whole units in relevance order, then one line for each relevant unit left out, never past
    the budget."""
    tags = ("coalesced_access", "row_reduction")
    ranked = [u.name for u in units_for_tags(tags)]
    everything = unit_context(tags, "units", 10**7)
    assert all(f"units/{name}/README.md" in everything for name in ranked)
    assert MORE_UNITS_HEADING not in everything  # nothing left out
    first = unit_context((ranked[0],), "units", 10**7)
    assert first and len(first) < len(everything)
    for budget in (len(first) + 400, len(first) - 1, 300, 0):
        got = unit_context(tags, "units", budget)
        assert len(got) <= budget, (budget, len(got))
    trimmed = unit_context(tags, "units", len(first) + 400)
    assert trimmed.startswith(first) and f"units/{ranked[1]}/README.md" not in trimmed
    assert f"- `units/{ranked[1]}` (triton)" in trimmed  # left out, but listed
    only_index = unit_context(tags, "units", 300)
    assert only_index.startswith(MORE_UNITS_HEADING) and "README.md\n" not in only_index
    assert unit_context(tags, "full", 0) == ""


def test_every_relevant_unit_is_named_in_the_default_context():
    """Within the default budget a GEMM, FP8 or attention task's context names every unit serving its
    tags, the Gluon warp-specialized units among them."""
    for task in ("gemm_8192_bf16", "gemm_narrow_bf16", "fp8_gemm_per_tensor", "gemm_bf16", "attention_causal_bf16",
                 "attention_gqa_bf16"):
        tags = get_task(task).tags
        context = unit_context(tags, "docs", CONTEXT_BUDGET_CHARS)
        assert len(context) <= CONTEXT_BUDGET_CHARS
        assert all(f"units/{u.name}" in context for u in units_for_tags(tags)), task
    assert "units/ws_persistent_gemm" in unit_context(get_task("gemm_8192_bf16").tags, "docs", CONTEXT_BUDGET_CHARS)
    assert "units/ws_fp8_gemm" in unit_context(get_task("fp8_gemm_per_tensor").tags, "docs", CONTEXT_BUDGET_CHARS)
    assert "units/ws_attention_fwd" in unit_context(get_task("attention_gqa_bf16").tags, "docs", CONTEXT_BUDGET_CHARS)


def test_taxonomy_covers_every_strategy_of_the_issue():
    texts = [" ".join((u.name, u.title, u.strategy, *u.tags)).lower().replace("-", " ").replace("_", " ")
             for u in list_units(include_on_paper=True)]
    missing = [k for k, words in TAXONOMY_CONTRACT.items() if not any(w in t for w in words for t in texts)]
    assert not missing, f"no unit covers: {missing}"
