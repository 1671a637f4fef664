"""How the judge builds an imported task's trials (``kernelbench.trials`` through the hooks in
``judge/inputs.py`` and ``judge/references.py``): inputs keep the structure the file's
``get_inputs`` gives them under every distribution and refill, weights keep their layers' scale,
dropout is off, and the float64 reference follows modules made in ``forward``, closures and
plain tensor attributes, finite wherever the file's own inputs are."""

from __future__ import annotations

import math

import pytest
import torch

from hawkeye_env.judge.parent.decide.references import build, reference64, trial_references
from hawkeye_env.judge.shared.inputs import make_inputs, randomize_parameters, refill
from hawkeye_env.tasks import registry
from hawkeye_env.tasks.spec import DISTRIBUTIONS


def _task(imported, level: int, number: int):
    _, report = imported
    spec = registry.get_task(report.by_number[(level, number)])
    return spec, registry.task_module(spec)


@pytest.mark.parametrize("distribution", DISTRIBUTIONS)
def test_inputs_keep_their_structure(imported, distribution):
    spec, module = _task(imported, 1, 2)
    shape = dict(spec.cpu_shapes[0])
    a, b = make_inputs(module, shape, distribution, 3, "cpu")
    assert torch.equal(a, a.triu()) and torch.equal(b, b.triu()) and bool((a.diagonal() != 0).all())
    spec, module = _task(imported, 1, 4)
    a, b = make_inputs(module, dict(spec.cpu_shapes[0]), distribution, 3, "cpu")
    assert torch.equal(a, a.T) and torch.equal(b, b.T)
    spec, module = _task(imported, 1, 3)
    p, t = make_inputs(module, dict(spec.cpu_shapes[0]), distribution, 3, "cpu")
    assert bool((p > 0).all()) and torch.allclose(p.sum(-1), torch.ones(p.shape[0]))
    spec, module = _task(imported, 1, 5)
    _, labels = make_inputs(module, dict(spec.cpu_shapes[0]), distribution, 3, "cpu")
    assert set(labels.unique().tolist()) == {-1.0, 1.0}


def test_inputs_follow_the_seed_and_the_distribution(imported):
    spec, module = _task(imported, 1, 1)
    shape = dict(spec.cpu_shapes[0])
    x0, = make_inputs(module, shape, "normal", 0, "cpu")
    assert torch.equal(x0, make_inputs(module, shape, "normal", 0, "cpu")[0])
    assert not torch.equal(x0, make_inputs(module, shape, "normal", 1, "cpu")[0])
    u, = make_inputs(module, shape, "uniform", 0, "cpu")
    assert float(u.min()) >= -0.5 and float(u.max()) <= 1.5 and float(u.mean()) > 0.3
    t, = make_inputs(module, shape, "heavy_tailed", 0, "cpu")
    assert float(t.abs().max()) > 6 * float(t.std())  # Student-t3 tails


def test_refills_keep_the_structure(imported):
    """The timed loop's fresh inputs (``inputs.refill``) come from the file's ``get_inputs`` too."""
    spec, module = _task(imported, 1, 2)
    inputs = make_inputs(module, dict(spec.cpu_shapes[0]), "normal", 0, "cpu")
    before = inputs[0].clone()
    refill(inputs, torch.Generator().manual_seed(5))
    assert not torch.equal(before, inputs[0]) and torch.equal(inputs[0], inputs[0].triu())


def test_weights_keep_their_initialisation_scale_and_constants_are_jittered(imported):
    spec, module = _task(imported, 2, 1)
    shape = dict(spec.cpu_shapes[0])
    bound = 1 / math.sqrt(shape["in_features"])  # nn.Linear: U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    ref, _ = build(spec, shape, "heavy_tailed", 11, "cpu")
    assert float(ref.linear.weight.detach().abs().max()) <= bound
    other, _ = build(spec, shape, "heavy_tailed", 12, "cpu")
    assert not torch.equal(ref.linear.weight, other.linear.weight)  # drawn per trial
    spec, module = _task(imported, 1, 8)
    norm, _ = build(spec, dict(spec.cpu_shapes[0]), "normal", 0, "cpu")
    w = norm.ln.weight.detach()
    assert not bool((w == 1).all()) and float((w - 1).abs().max()) <= 0.3 + 1e-6


def test_dropout_runs_in_eval_mode(imported):
    spec, module = _task(imported, 2, 2)
    shape = dict(spec.cpu_shapes[0])
    ref, inputs = build(spec, shape, "normal", 0, "cpu")
    assert not ref.dropout.training and ref.training  # only dropout layers leave training mode
    with torch.no_grad():
        assert torch.equal(ref(*inputs), ref(*inputs))


@pytest.mark.parametrize("level, number", [(2, 3), (2, 4), (3, 3)])
def test_float64_reference_follows_forward_modules_closures_and_attributes(imported, level, number):
    """A LayerNorm made in ``forward`` and a lambda keeping the original float32 layer after
    ``deepcopy`` make a plain ``.double()`` copy raise (mixed dtypes); with a float32 ``h0``
    attribute and a training-mode BatchNorm it runs. The task's reference runs in float64 on each
    and matches the float32 model closely."""
    spec, module = _task(imported, level, number)
    ref, inputs = build(spec, dict(spec.cpu_shapes[0]), "normal", 0, "cpu")
    with torch.no_grad():
        wide, = reference64(ref, inputs, keep_float64=True)
        native = ref(*inputs)
    assert wide.dtype == torch.float64
    assert float((wide - native.double()).norm() / wide.norm()) < 1e-5


def test_kldiv_reference_is_finite_on_every_distribution(imported):
    """Redrawn as plain floats, KLDiv's probabilities turn negative and its reference is NaN on
    every trial; drawn by the file's own ``get_inputs`` they stay a distribution."""
    spec, _ = _task(imported, 1, 3)
    for distribution in DISTRIBUTIONS:
        trial = {"shape": dict(spec.cpu_shapes[0]), "distribution": distribution, "seed": 7, "rerun": True}
        got = trial_references(spec, trial, "cpu")
        assert all(bool(torch.isfinite(r).all()) for r in got.reference + got.fresh_reference)


def test_shipped_tasks_keep_the_judge_defaults():
    """Tasks without the hooks: floating inputs and parameters are redrawn as before."""
    spec = registry.get_task("rmsnorm_bf16")
    module = registry.task_module(spec)
    shape = dict(spec.cpu_shapes[0])
    x = make_inputs(module, shape, "uniform", 0, "cpu")
    assert type(x) is list
    model = module.Model(*module.get_init_inputs(**shape))
    randomize_parameters(model, "normal", 0)
    assert not all(bool((p == 1).all()) for p in model.parameters())
