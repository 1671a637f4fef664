"""Error concentration (``structure.py``): the expert's own output passes, and the same output with
one row, column, head, 64-element tile or 16x16 block off by a few percent fails ``compare`` with a
message that names the slice, on six tasks under the Triton interpreter (one trial each; the full
calibration is ``python -m bench.structure_calibration``)."""

from __future__ import annotations

import os

import pytest
import torch

from hawkeye_env.judge.parent.decide import correctness, structure
from hawkeye_env.tasks.registry import get_task, solution_source
from hawkeye_env.tasks.spec import BF16

os.environ.setdefault("TRITON_INTERPRET", "1")

from bench.calibration_outputs import load_solution  # noqa: E402
from bench.structure_calibration import bug_eps, corrupt, expert_outputs, interpret_on_cpu, judge  # noqa: E402

interpret_on_cpu()

# (task, CPU shape index, structures seeded there)
CASES = [
    ("vector_add_fp32", 1, ("tile",)),
    ("softmax_fp32", 1, ("row", "column", "tile")),
    ("layernorm_bf16", 0, ("row", "column", "tile")),
    ("gemm_bf16", 1, ("row", "column", "block")),
    ("attention_bf16", 0, ("row", "column", "head", "block")),
    ("simple_gla_fwd_bf16", 0, ("row", "column", "head")),
]
# A seeded head is 1 of 2 heads at these shapes, too few to be a family (``MIN_SLICES``): it is named
# by its worst row or block, inside head 1 (``(0, 1, ...)``).
NAMES = {"row": "row ", "column": "column ", "head": "(0, 1", "tile": "elements ", "block": "16x16 block"}


@pytest.fixture(scope="module")
def outputs():
    got = {}
    for task, shape_index, _ in CASES:
        spec = get_task(task)
        module = load_solution(solution_source(spec), f"concentration_{task}")
        got[task] = expert_outputs(spec, module, dict(spec.cpu_shapes[shape_index]), "normal", 0, "cpu")
    return got


@pytest.mark.parametrize(("task", "shape_index", "kinds"), CASES, ids=[c[0] for c in CASES])
def test_seeded_structured_bugs_fail_and_are_named(outputs, task, shape_index, kinds):
    spec = get_task(task)
    outs, refs, nats = outputs[task]
    honest = judge(spec, outs[0], refs[0], nats[0], "cpu")
    assert honest["ok"] and honest["structure_score"] < 1, honest
    eps = bug_eps(spec, nats[0].dtype)
    for kind in kinds:
        bad = corrupt(outs[0], kind, eps)
        c = judge(spec, bad, refs[0], nats[0], "cpu")
        assert not c["ok"], (kind, c)
        assert "of output 0 is off by" in c["reason"] and NAMES[kind] in c["reason"], (kind, c["reason"])
        assert "an error concentrated in one index set" in c["reason"]


def test_one_feature_column_under_the_quantile_fails():
    """A LayerNorm-like output whose column 17 is 10% off on every row: 1 of 1024 columns, under
    the 0.999 quantile's 0.1%, passes every other rule and fails this one, with a message that
    says what to change."""
    g = torch.Generator().manual_seed(0)
    ref = torch.randn(2048, 1024, dtype=torch.float64, generator=g)
    out = ref.clone()
    out[:, 17] *= 1.1
    c = correctness.compare(out.to(torch.bfloat16), ref, torch.bfloat16, BF16, native=ref.to(torch.bfloat16),
                            label="output 0")
    assert not c["ok"] and c["quantile_err_ratio"] <= 1.0 and c["rel_l2"] < c["rel_l2_bound"]
    assert c["reason"].startswith("column 17 of output 0 is off by 10.0")
    assert "rtol 1.60% of |ref|" in c["reason"]


def test_honest_rounding_is_not_concentrated():
    g = torch.Generator().manual_seed(1)
    ref = torch.randn(4, 8, 64, 32, dtype=torch.float64, generator=g)
    found = structure.concentrated((ref.to(torch.bfloat16).double() - ref).abs() / (0.016 * (1 + ref.abs())))
    assert found is not None and found.score < 1 / 2


def test_a_native_error_spread_over_every_column_excuses_no_column_bug():
    """A native reference off by about half its bound in every column (as bf16 RMSNorm's is) breaks
    no slice's rule, so it excuses nothing: column 17 off by 10%, less than the native's own error
    on that column, still fails."""
    g = torch.Generator().manual_seed(2)
    ref = torch.randn(1024, 256, dtype=torch.float64, generator=g)
    native = ref * (1 + 0.3 * torch.randn(ref.shape, dtype=torch.float64, generator=g))
    out = ref.clone()
    out[:, 17] *= 1.1
    assert (out - ref)[:, 17].abs().mean() < (native - ref)[:, 17].abs().mean()
    c = correctness.compare(out.to(torch.bfloat16), ref, torch.bfloat16, BF16, native=native.to(torch.bfloat16),
                            label="output 0")
    assert not c["ok"] and c["reason"].startswith("column 17 of output 0"), c["reason"]


def test_an_element_over_the_cap_is_excused_only_near_the_natives_own_error_there():
    """Element 300 of the reference is zero where its row is not; the native is off there by 0.5
    of the row's scale (over ``WORST_CAP``). A candidate off by 1.1x the native's error passes;
    3x fails the cap; the same 1.1x error fails against a native that is right there."""
    g = torch.Generator().manual_seed(3)
    ref = torch.randn(64, 64, dtype=torch.float64, generator=g)
    ref.view(-1)[300] = 0.0
    scale = float(torch.maximum(ref[4].pow(2).mean().sqrt(), ref.pow(2).mean().sqrt()))
    native = ref.to(torch.bfloat16).double()
    native.view(-1)[300] = 0.5 * scale
    for multiple, native_right, ok in ((1.1, False, True), (3.0, False, False), (1.1, True, False)):
        out = ref.to(torch.bfloat16).double()
        out.view(-1)[300] = multiple * 0.5 * scale
        nat = ref.to(torch.bfloat16) if native_right else native.to(torch.bfloat16)
        c = correctness.compare(out.to(torch.bfloat16), ref, torch.bfloat16, BF16, native=nat)
        assert c["ok"] is ok, (multiple, native_right, c["reason"])
        assert ok or c["reason"].startswith("element 300") or "the worst: element 300" in c["reason"], c["reason"]
