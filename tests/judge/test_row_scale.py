"""The worst-element rule is judged on the scale of the element's row (``correctness.row_rms``).

With heavy-tailed inputs one output row (a token with an extreme query) is far larger than the
output's RMS, and an honest bf16 kernel's error there scales with the row. On the H200 the
expert and FLA both failed the global-RMS cap at one such element of GLA. These tests build that
case: rows of normal outputs, one row 30x larger, each element's error a bf16 rounding of its row's
scale."""

from __future__ import annotations

import torch

from hawkeye_env.judge.parent.decide import correctness
from hawkeye_env.tasks.spec import LINEAR_ATTENTION_BF16


def _heavy_row_case(seed: int = 0, rows: int = 4096, width: int = 128, factor: float = 30.0):
    g = torch.Generator().manual_seed(seed)
    ref = torch.randn(rows, width, generator=g, dtype=torch.float64)
    ref[7] *= factor
    row_scale = ref.pow(2).mean(-1, keepdim=True).sqrt()
    # an honest error: 0.3% of the row's scale on every element (bf16 operands), 15% on one
    noise = torch.randn(rows, width, generator=g, dtype=torch.float64) * 3e-3 * row_scale
    noise[7, 3] = 0.15 * float(row_scale[7])  # the heavy row's worst element, a cancelling sum
    ref[7, 3] = 0.05 * float(row_scale[7])  # near zero: the error is large against |ref_i|
    out = (ref + noise).to(torch.bfloat16)
    native = ref.to(torch.float32).to(torch.float64)
    return out, ref, native


def test_an_honest_error_in_a_heavy_row_passes():
    out, ref, native = _heavy_row_case()
    got = correctness.compare(out, ref, torch.bfloat16, LINEAR_ATTENTION_BF16, native=native)
    assert got["ok"], got["reason"]


def test_the_same_error_failed_the_global_rms_cap():
    """What the row scale changes: against rms(ref) + |ref_i| alone that element is over the cap."""
    out, ref, _ = _heavy_row_case()
    r = ref.double()
    err = (out.double() - r).abs()
    global_over = float((err / (correctness.WORST_CAP * (r.pow(2).mean().sqrt() + r.abs()))).max())
    local_over = float((err / (correctness.WORST_CAP * (correctness.row_rms(r, r.pow(2).mean().sqrt())
                                                         + r.abs()))).max())
    assert global_over > 1.0 > local_over


def test_a_zeroed_row_and_zeroed_elements_still_fail():
    out, ref, native = _heavy_row_case()
    row = out.clone()
    row[100] = 0  # a skipped row of normal size
    got = correctness.compare(row, ref, torch.bfloat16, LINEAR_ATTENTION_BF16, native=native)
    assert not got["ok"] and "element" in got["reason"], got
    heavy = out.clone()
    heavy[7, :8] = 0  # part of the heavy row skipped
    got = correctness.compare(heavy, ref, torch.bfloat16, LINEAR_ATTENTION_BF16, native=native)
    assert not got["ok"], got


def test_short_rows_and_vectors_use_the_global_rms():
    rms = torch.tensor(2.0, dtype=torch.float64)
    assert correctness.row_rms(torch.ones(10, dtype=torch.float64) * 5, rms) is rms
    assert correctness.row_rms(torch.ones(10, correctness.ROW_MIN - 1, dtype=torch.float64) * 5, rms) is rms
    wide = torch.ones(3, correctness.ROW_MIN, dtype=torch.float64)
    wide[1] *= 5
    assert correctness.row_rms(wide, rms).reshape(-1).tolist() == [2.0, 5.0, 2.0]
