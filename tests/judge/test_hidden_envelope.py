"""Trials beyond the public shapes: hidden shapes, non-contiguous layouts, edge-value distributions.

Planning is deterministic per seed, hidden shapes stay within each task's family and budget and
change with the seed, layouts keep the logical values, and the replay records one plan per
distinct (shape, layout).
"""

from __future__ import annotations

import pytest
import torch

from hawkeye_env.judge.parent import hidden_shapes as hs
from hawkeye_env.judge.parent.record_replay import recording_trials
from hawkeye_env.judge.parent.trial_plan import plan_trials
from hawkeye_env.judge.shared.inputs import make_inputs
from hawkeye_env.tasks.registry import get_task, list_tasks, task_module
from hawkeye_env.tasks.spec import LAYOUTS

TASKS = [s.id for s in list_tasks()]
SEEDS = range(6)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_planning_is_deterministic_per_seed(device: str) -> None:
    for task in TASKS:
        spec = get_task(task)
        if device == "cpu" and not spec.cpu_shapes:
            continue
        assert plan_trials(spec, device, 7) == plan_trials(spec, device, 7), task


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("task", TASKS)
def test_hidden_shapes_are_within_family_and_budget(task: str, device: str) -> None:
    spec = get_task(task)
    public = [dict(s) for s in (*spec.cpu_shapes, *spec.gpu_shapes)]
    flops, nbytes = hs.budget(spec, device)
    drawn = 0
    for seed in SEEDS:
        for shape in hs.hidden_shapes(spec, device, seed):
            drawn += 1
            assert shape not in public
            assert set(shape) == set(spec.gpu_shapes[0])
            assert hs.within_family(spec, device, shape), shape
            assert spec.flops(**shape) <= flops and spec.bytes_moved(**shape) <= nbytes
    assert drawn >= len(SEEDS), f"{task} drew {drawn} hidden {device} shapes in {len(SEEDS)} verdicts"


def test_hidden_shapes_differ_across_seeds() -> None:
    for task in ("vector_add_fp32", "gemm_bf16", "softmax_fp32", "rmsnorm_bf16"):
        spec = get_task(task)
        seen = {tuple(tuple(sorted(s.items())) for s in hs.hidden_shapes(spec, "cpu", seed)) for seed in range(8)}
        assert len(seen) > 1, task


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_plan_marks_hidden_layout_and_value_trials(device: str) -> None:
    spec = get_task("softmax_fp32")
    trials = plan_trials(spec, device, 3)
    assert sum(bool(t.get("hidden")) for t in trials) == hs.HIDDEN[device]
    assert [t["layout"]["name"] for t in trials if t["layout"]] == ["sliced"]
    extra = {t["distribution"] for t in trials} & {"zeros", "repeated", "large"}
    assert extra == {"zeros", "repeated", "large"} if device == "cuda" else len(extra) == 1
    assert set(spec.distributions) <= {t["distribution"] for t in trials}
    assert {tuple(sorted(s.items())) for s in spec.cpu_shapes} <= {tuple(sorted(t["shape"].items())) for t in trials}
    assert trials[-1].get("rerun") and not trials[-1].get("hidden")


def test_every_extra_distribution_is_drawn_on_cpu_across_seeds() -> None:
    spec = get_task("softmax_fp32")
    drawn = {t["distribution"] for seed in range(12) for t in plan_trials(spec, "cpu", seed)}
    assert {"zeros", "repeated", "large"} <= drawn


@pytest.mark.parametrize("name", LAYOUTS)
def test_layouts_keep_logical_values(name: str) -> None:
    module = task_module(get_task("gemm_bf16"))
    shape = {"M": 5, "N": 7, "K": 9}
    plain = make_inputs(module, shape, "normal", 11, "cpu")
    laid = make_inputs(module, shape, "normal", 11, "cpu", {"name": name})
    for x, y in zip(plain, laid):
        assert y.shape == x.shape and y.storage_offset() > 0
        expected = x[:1].expand_as(x) if name == "expanded" else x
        assert torch.equal(y, expected)
        assert y.is_contiguous() == (name == "offset")


def test_value_distributions_hold_their_edges() -> None:
    softmax = task_module(get_task("softmax_fp32"))
    x = make_inputs(softmax, {"M": 8, "N": 33}, "zeros", 1, "cpu")[0]
    assert (x[0] == 0).all() and x[1, 0] == 0 and (x[1] != 0).any()
    big = make_inputs(softmax, {"M": 8, "N": 33}, "large", 1, "cpu")[0]
    assert big.abs().max() > 1e3
    assert len(make_inputs(softmax, {"M": 8, "N": 33}, "repeated", 1, "cpu")[0].unique()) <= 9
    ce = task_module(get_task("cross_entropy_fp32"))
    ids = make_inputs(ce, {"M": 64, "V": 1000}, "skewed_ids", 1, "cpu")[1]
    assert ids.min() >= 0 and ids.max() < 1000 and len(ids.unique()) < 64


def test_recording_trials_one_per_shape_and_layout() -> None:
    trials = [{"shape": {"N": 3}, "layout": None}, {"shape": {"N": 3}, "layout": {"name": "sliced"}},
              {"shape": {"N": 3}, "layout": None}, {"shape": {"N": 5}}]
    got = recording_trials(trials)
    assert [(t["shape"], t["layout"]) for t in got] == [({"N": 3}, None), ({"N": 3}, {"name": "sliced"}),
                                                        ({"N": 5}, None)]
    assert not any(t.get("warm") for t in got)
    trials[1]["rerun"] = True  # a repeat trial: its shape and layout recorded again, as a second forward
    got = recording_trials(trials)
    assert [(t["shape"], t["layout"], t.get("warm", False)) for t in got] == [
        ({"N": 3}, None, False), ({"N": 3}, {"name": "sliced"}, False), ({"N": 5}, None, False),
        ({"N": 3}, {"name": "sliced"}, True)]
