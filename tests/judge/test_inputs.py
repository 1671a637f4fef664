"""Trial inputs and parameters are drawn on the trial's device (``judge/inputs.py``)."""

from __future__ import annotations

import types

import torch

from hawkeye_env.judge.inputs import _task_inputs, make_inputs, randomize_parameters


def _module(with_integers: bool, seen: list) -> types.SimpleNamespace:
    def get_inputs(M: int = 4, V: int = 10):
        seen.append(torch.get_default_device())
        logits = torch.randn(M, V)
        return [logits, torch.randint(0, V, (M,))] if with_integers else [logits]
    return types.SimpleNamespace(get_inputs=get_inputs)


def test_integer_inputs_are_built_with_the_trial_device_as_default():
    """The real ``get_inputs`` call (needed for integer values) runs on the trial's device, so its
    discarded floating draws are not a host loop at GPU shapes."""
    seen: list = []
    out = _task_inputs(_module(True, seen), {"M": 3, "V": 7}, "meta")
    assert [d.type for d in seen] == ["meta", "meta"]  # the shape probe, then the real call
    assert out[1].device.type == "meta"
    seen.clear()
    out = _task_inputs(_module(True, seen), {"M": 3, "V": 7}, "cpu")
    assert [d.type for d in seen] == ["meta", "cpu"] and out[1].dtype == torch.int64


def test_floating_only_inputs_need_no_real_call():
    seen: list = []
    _task_inputs(_module(False, seen), {"M": 3, "V": 7}, "cpu")
    assert len(seen) == 1


def test_inputs_and_parameters_are_reproducible_per_seed_and_differ_across_seeds():
    module = _module(True, [])
    a = make_inputs(module, {"M": 5, "V": 9}, "heavy_tailed", 11, "cpu")
    b = make_inputs(module, {"M": 5, "V": 9}, "heavy_tailed", 11, "cpu")
    c = make_inputs(module, {"M": 5, "V": 9}, "heavy_tailed", 12, "cpu")
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    assert not torch.equal(a[0], c[0])
    nets = [torch.nn.Linear(6, 3) for _ in range(3)]
    for net, seed in zip(nets, (4, 4, 5)):
        randomize_parameters(net, "uniform", seed, "cpu")
    assert torch.equal(nets[0].weight, nets[1].weight) and not torch.equal(nets[0].weight, nets[2].weight)
    assert nets[0].weight.device.type == "cpu"  # redrawn in place, wherever the parameter lives
