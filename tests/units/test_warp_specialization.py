"""Every configuration of the ``warp_specialization`` unit computes ``a @ b`` (under the Triton
interpreter, or on CUDA when present), and each comparison group differs only by the strategy.

The persistent kernels run at shapes whose tiles outnumber the programs unevenly, so tile loops take
different trip counts, cross a grouped-order band and store half-empty epilogue subtiles; outputs
come from NaN-poisoned allocations so an unwritten element fails.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from hawkeye_env.judge.parent.decide.correctness import compare
from hawkeye_env.tasks.spec import BF16
from units.lib.harness import poisoned_empty
from units.lib.index import get_unit, resolve
from units.warp_specialization import kernel, naive

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
# (M, N, K): the unit's CPU shapes, then 5 row tiles by 2 (128x128) or 1 (128x256) column tiles
# over 3 programs (4/3/3 and 2/2/1 tiles each) with a partial last K tile, then 9 row tiles, one
# past a GROUP_M=8 band, in a single column whose right epilogue half lies wholly outside N.
SHAPES = [tuple(s[d] for d in "MNK") for s in get_unit("warp_specialization").cpu_shapes]
SHAPES += [(520, 136, 88), (1100, 24, 72)]


def _inputs(m: int, n: int, k: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    make_inputs = resolve(get_unit("warp_specialization").make_inputs)
    return make_inputs({"M": m, "N": n, "K": k}, DEVICE, seed)


@pytest.mark.parametrize("name", sorted(kernel.CANDIDATES))
def test_candidate_matches_reference(name):
    for seed, (m, n, k) in enumerate(SHAPES):
        a, b = _inputs(m, n, k, seed)
        with poisoned_empty():
            out = kernel.matmul(a, b, name)
        verdict = compare(out, a.double() @ b.double(), torch.bfloat16, BF16)
        assert verdict["ok"], f"{name} {(m, n, k)}: {verdict['reason']}"


def test_persistent_tile_loops_take_several_uneven_trips():
    if DEVICE != "cpu":
        pytest.skip("the program count is the SM count on CUDA")
    for block_n, tiles in ((128, 10), (256, 5)):
        config = kernel.GemmConfig(True, True, block_n=block_n)
        programs = kernel.num_programs(config, 520, 136, torch.device("cpu"))
        assert programs == kernel.CPU_NUM_PROGRAMS < tiles and tiles % programs
    assert kernel.num_programs(kernel.GemmConfig(True, False), 33, 40, torch.device("cpu")) == 1
    assert kernel.num_programs(kernel.GemmConfig(False, True), 520, 136, torch.device("cpu")) == 5


def test_comparison_groups_differ_only_by_the_strategy():
    """Each group opens with a warp-specialized config; every other member has the same tiles,
    stages and epilogue and is either unspecialized (warps sized for one warp group) or a
    specialized variant of the same design."""
    tiles = ("persistent", "block_m", "block_n", "block_k", "num_stages", "epilogue_subtile", "group_m")
    for ws, *others in kernel.COMPARISONS:
        assert ws.warp_specialize and not ws.flatten and any(not c.warp_specialize for c in others)
        for c in others:
            assert [getattr(c, f) for f in tiles] == [getattr(ws, f) for f in tiles], (ws.name, c.name)
    plain = [c for group in kernel.COMPARISONS for c in group[1:] if not c.warp_specialize]
    assert all(c.num_warps == (8 if c.block_n == 256 else 4) for c in plain)


def test_candidate_names_are_unique_and_name_their_config():
    configs = [c for group in kernel.COMPARISONS for c in group]
    assert len({c.name for c in configs}) == len(configs) == len(kernel.CANDIDATES)
    assert all(kernel.CANDIDATES[c.name] == c for c in configs)
    assert kernel.resolve_config(None) == kernel.SOLUTION
    assert kernel.resolve_config(kernel.NAIVE.name) == kernel.NAIVE
    with pytest.raises(KeyError, match="persistent_128x256x64_s3_w4_ws"):
        kernel.resolve_config("persistent_64x64x64")


def test_naive_is_the_solution_without_the_keyword():
    assert kernel.SOLUTION.warp_specialize and not kernel.NAIVE.warp_specialize
    with_keyword = dataclasses.replace(kernel.NAIVE, warp_specialize=True, num_warps=kernel.SOLUTION.num_warps)
    assert with_keyword == kernel.SOLUTION
    a, b = _inputs(33, 40, 72, 0)
    assert torch.equal(naive.matmul(a, b), kernel.matmul(a, b, kernel.NAIVE))


def test_operands_that_cannot_back_a_descriptor_are_refused():
    a, b = _inputs(16, 40, 72, 0)
    with pytest.raises(ValueError, match="16-byte"):
        kernel.matmul(a[:, 1:], b[1:], "persistent_128x128x64_s4_w4_ws")
    with pytest.raises(ValueError, match=r"a \[M, K\]"):
        kernel.matmul(a, b.t())
    with pytest.raises(TypeError, match="bfloat16"):
        kernel.matmul(a.float(), b.float())
