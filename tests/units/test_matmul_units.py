"""The five matmul units run correctly under the Triton interpreter (or on CUDA when present).

Every solution, naive kernel and extra callable is compared in float64 with the judge's ``compare``
and the bf16 tolerance against the unit's PyTorch reference, at each CPU shape and three seeds,
with uninitialized allocations filled with NaN so unwritten output elements fail.
"""

from __future__ import annotations

import functools

import pytest
import torch

from hawkeye_env.judge.correctness import compare
from hawkeye_env.tasks.spec import BF16
from units.index import get_unit, resolve

MATMUL_UNITS = (
    "grouped_tile_order", "software_pipelining", "tma_descriptors", "persistent_splitk",
    "warp_specialization",
)
SEEDS = (0, 1, 2)
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def _poisoned_call(fn, *args):
    deterministic = torch.are_deterministic_algorithms_enabled()
    fill = torch.utils.deterministic.fill_uninitialized_memory
    torch.use_deterministic_algorithms(True)
    torch.utils.deterministic.fill_uninitialized_memory = True
    try:
        return fn(*args)
    finally:
        torch.use_deterministic_algorithms(deterministic)
        torch.utils.deterministic.fill_uninitialized_memory = fill


def _callables(unit) -> list[tuple[str, str]]:
    paths = [("solution", unit.solution), ("naive", unit.naive)]
    paths += [(key, path) for key, path in unit.extra.items() if ":" in path]
    return paths


@pytest.mark.parametrize("name", MATMUL_UNITS)
def test_unit_matches_reference(name):
    unit = get_unit(name)
    make_inputs = resolve(unit.make_inputs)
    reference = resolve(unit.reference)
    for role, path in _callables(unit):
        fn = resolve(path)
        for shape in unit.cpu_shapes:
            for seed in SEEDS:
                a, b = make_inputs(shape, DEVICE, seed)
                ref = reference(a.double(), b.double())
                out = _poisoned_call(fn, a, b)
                verdict = compare(out, ref, torch.bfloat16, BF16)
                assert verdict["ok"], f"{name} {role} {dict(shape)} seed {seed}: {verdict['reason']}"


@pytest.mark.parametrize("name", MATMUL_UNITS)
def test_unit_metadata(name):
    unit = get_unit(name)
    assert unit.metric is not None and unit.metric.min_margin > 1.0
    assert "tiled_mma" in unit.tags
    assert any(any(v & (v - 1) for v in shape.values()) for shape in unit.cpu_shapes)
    for shape in unit.gpu_shapes:
        assert unit.flops(**shape) == 2.0 * shape["M"] * shape["N"] * shape["K"]
        assert unit.bytes_moved(**shape) > 0


def test_warp_specialization_is_the_smallest_margin():
    margins = {name: get_unit(name).metric.min_margin for name in MATMUL_UNITS}
    assert min(margins, key=margins.get) == "warp_specialization"


def test_tma_operands_must_be_aligned():
    from units.tma_descriptors.kernel import matmul

    a = torch.randn(16, 33, dtype=torch.bfloat16)
    b = torch.randn(33, 16, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="16-byte"):
        matmul(a.to(DEVICE), b.to(DEVICE))


def test_split_k_fills_the_gpu_at_the_skinny_shape():
    from units.persistent_splitk.kernel import CTAS_PER_SM, MIN_K_TILES_PER_SPLIT, split_k_for

    assert CTAS_PER_SM == 4
    assert split_k_for(64, 4096, 16384, 132) == 16  # 32 tiles x 16 = 512 programs, 4 per SM
    assert split_k_for(64, 1024, 65536, 132) == 64  # 8 tiles x 64 (66 asked, lowered so ranges are equal)
    assert split_k_for(8192, 8192, 8192, 132) == 1
    assert split_k_for(64, 128, 512, 132) == 512 // 64 // MIN_K_TILES_PER_SPLIT  # each range keeps 4 K tiles


def test_split_k_takes_a_decode_configuration_and_a_transposed_weight():
    """Explicit tiles and ``split_k`` (lowered so no K range is empty) on ``b = w.t()`` of an
    ``nn.Linear``-layout weight, at an odd K whose last range is partial."""
    from units.persistent_splitk.kernel import matmul, no_empty_split

    assert [no_empty_split(5, s) for s in (1, 2, 3, 4, 5, 9)] == [1, 2, 3, 3, 5, 5]
    g = torch.Generator().manual_seed(0)
    x = torch.randn(5, 600, generator=g).to(torch.bfloat16).to(DEVICE)
    w = torch.randn(70, 600, generator=g).to(torch.bfloat16).to(DEVICE)
    for split_k in (1, 4, 9):
        decode = functools.partial(matmul, block_m=16, block_n=64, block_k=128, split_k=split_k, num_stages=4,
                                   num_warps=4)
        out = _poisoned_call(decode, x, w.t())
        verdict = compare(out, x.double() @ w.double().t(), torch.bfloat16, BF16)
        assert verdict["ok"], f"split_k={split_k}: {verdict['reason']}"
