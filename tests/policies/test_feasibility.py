"""Feasibility estimates of knob configurations, and the search policy proposing no child that
looks uncompilable on Hopper unless its parent already did."""

from __future__ import annotations

import random

import pytest

import policies.search as search
from hawkeye_env.edits import extract_source
from policies.feasibility import (
    ACC_REGISTERS,
    BLOCK_ELEMENTS_PER_THREAD,
    SHARED_MEMORY_BYTES,
    KnobValues,
    acceptable,
    estimates,
    knob_values,
    rejections,
)
from policies.search import SearchPolicy, knob_sites, mutate, task_seeds

GEMM_TASKS = ["gemm_bf16", "gemm_narrow_bf16", "gemm_skinny_bf16", "gemm_bias_gelu_bf16"]


def _gemm(m: int, n: int, k: int = 64, stages: int = 3, warps: int = 8) -> str:
    return (f"BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M = {m}, {n}, {k}, 8\n"
            f"NUM_STAGES, NUM_WARPS = {stages}, {warps}\n")


def _values(source: str) -> KnobValues:
    return knob_values(knob_sites(source))


def _estimates(source: str) -> dict[str, float]:
    return estimates(_values(source))


def _obs(task: str) -> dict:
    return {"task_id": task, "prompt": "", "source": "", "feedback": "", "turn": 0, "trajectory": 0}


def test_gemm_estimates():
    assert _estimates(_gemm(128, 256)) == {
        ACC_REGISTERS: 128.0,  # 128 * 256 / (32 * 8)
        SHARED_MEMORY_BYTES: 147456.0,  # 3 * (128 * 64 + 64 * 256) * 2
    }
    assert _estimates(_gemm(16, 16, 16, 1, 16)) == {ACC_REGISTERS: 0.5, SHARED_MEMORY_BYTES: 1024.0}


def test_block_estimate():
    source = "def launch(x, BLOCK=4096, num_warps=8):\n    pass\n"
    assert _estimates(source) == {BLOCK_ELEMENTS_PER_THREAD: 16.0}  # 4096 / (32 * 8)


def test_an_estimate_needs_all_its_knobs():
    assert _estimates("BLOCK_M, BLOCK_N = 128, 256\n") == {}  # no num_warps
    assert _estimates("BLOCK_M, BLOCK_N, NUM_WARPS = 128, 256, 4\n") == {ACC_REGISTERS: 256.0}  # no K, no stages
    assert _estimates("BLOCK_N, NUM_WARPS, NUM_STAGES = 2048, 8, 3\n") == {}  # a row block, no M
    assert _estimates("BLOCK = 1024\n") == {}


def test_values_are_conservative_across_kernels_and_defaults():
    source = (
        "BLOCK_M = 128\n"
        "def gemm(a, BLOCK_SIZE_M=64, BN=256, _BLOCK_K_=32, GROUP_M=8, num_warps=8, num_stages=3):\n"
        "    pass\n"
        "def reduce(x, XBLOCK=1024, BLOCK=2048, BLOCK_D=512, num_warps=2, num_stages=1):\n"
        "    pass\n"
    )
    assert _values(source) == KnobValues(block_m=128, block_n=256, block_k=32, block=2048, num_warps=2, num_stages=3)
    assert _estimates(source) == {
        ACC_REGISTERS: 512.0,  # 128 * 256 / (32 * 2): the reduce kernel's 2 warps count against the GEMM
        SHARED_MEMORY_BYTES: 3 * (128 * 32 + 32 * 256) * 2,
        BLOCK_ELEMENTS_PER_THREAD: 32.0,
    }


@pytest.mark.parametrize("warps", [4, 2])
def test_a_128x512_tile_over_few_warps_is_rejected(warps):
    parent, child = _values(_gemm(128, 256, warps=8)), _values(_gemm(128, 512, k=32, warps=warps))
    assert rejections(parent, child) == [ACC_REGISTERS]
    assert not acceptable(parent, child)


def test_the_register_limit_itself_is_accepted():
    assert acceptable(_values(_gemm(128, 128)), _values(_gemm(128, 256, warps=4)))  # 256 registers


def test_a_child_no_worse_than_an_infeasible_looking_parent_is_accepted():
    parent = _values(_gemm(128, 512, k=32, warps=4))  # 512 registers, over the limit
    assert acceptable(parent, _values(_gemm(256, 256, k=32, warps=4)))  # 512 again
    assert acceptable(parent, _values(_gemm(128, 512, k=16, warps=4)))  # another knob moved
    assert acceptable(parent, _values(_gemm(128, 512, k=32, warps=8)))  # 256
    assert rejections(parent, _values(_gemm(256, 512, k=32, warps=4))) == [ACC_REGISTERS]  # 1024


def test_shared_memory_past_227kb_is_rejected():
    parent = _values(_gemm(128, 256, stages=3))
    assert rejections(parent, _values(_gemm(128, 256, stages=5))) == [SHARED_MEMORY_BYTES]  # 245760 bytes
    assert rejections(parent, _values(_gemm(128, 256, k=128))) == [SHARED_MEMORY_BYTES]  # 294912 bytes
    assert acceptable(parent, _values(_gemm(128, 256, stages=4)))  # 196608 bytes


def test_a_wide_1d_block_over_few_warps_is_rejected():
    def source(block: int, warps: int) -> str:
        return f"BLOCK = {block}\nNUM_WARPS = {warps}\n"

    parent = _values(source(4096, 8))
    assert rejections(parent, _values(source(16384, 1))) == [BLOCK_ELEMENTS_PER_THREAD]  # 512 a thread
    assert acceptable(parent, _values(source(16384, 4)))  # 128 a thread


def test_mutate_never_returns_a_rejected_child():
    source = _gemm(128, 256)
    parent = _values(source)
    rng = random.Random(0)
    children = [mutate(source, rng) for _ in range(300)]
    assert all(acceptable(parent, _values(c)) for c in children)
    assert len(set(children)) > 50  # the filter leaves plenty to explore


def test_mutate_keeps_the_parent_when_no_draw_is_acceptable(monkeypatch):
    monkeypatch.setattr(search, "acceptable", lambda parent, child: False)
    source = _gemm(128, 256)
    assert mutate(source, random.Random(0)) == source


def _sampled_pairs(task: str) -> list[tuple[str, str]]:
    """(parent seed, child source) of ``SearchPolicy(seed=0)``'s 32 first-turn samples of ``task``."""
    seeds = task_seeds(task)
    [actions] = SearchPolicy(seed=0).sample([_obs(task)], n=32)
    return [(seeds[i % len(seeds)], extract_source(a)) for i, a in enumerate(actions)]


@pytest.mark.parametrize("task", GEMM_TASKS)
def test_search_samples_stay_within_the_register_file_unless_their_parent_did_not(task):
    checked = 0
    for parent, child in _sampled_pairs(task):
        before, after = _estimates(parent), _estimates(child)
        assert rejections(_values(parent), _values(child)) == []
        if ACC_REGISTERS in after:
            checked += 1
            assert after[ACC_REGISTERS] <= 256 or after[ACC_REGISTERS] <= before[ACC_REGISTERS], task
    assert checked >= 8, f"{task}: too few samples with a tile accumulator to check"


def test_without_the_filter_the_same_search_proposes_such_children(monkeypatch):
    """The property above is not vacuous: the unfiltered mutations of these seeds do overflow."""
    monkeypatch.setattr(search, "acceptable", lambda parent, child: True)
    overflowing = [child for task in GEMM_TASKS for _, child in _sampled_pairs(task)
                   if _estimates(child).get(ACC_REGISTERS, 0) > 256]
    assert overflowing
