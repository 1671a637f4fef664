"""Trial inputs and parameters are drawn on the trial's device (``judge/inputs.py``)."""

from __future__ import annotations

import os
import subprocess
import sys
import types
from pathlib import Path

import torch

from hawkeye_env.judge.shared.inputs import _task_inputs, make_inputs, probe_inputs, randomize_parameters


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


def _signature(items: list) -> list:
    return [(tuple(x.shape), x.dtype) if isinstance(x, torch.Tensor) else x for x in items]


def test_the_probe_gives_every_task_the_shapes_and_dtypes_of_a_plain_meta_call():
    """``probe_inputs`` turns random draws into empty tensors: every registered task's shapes then
    build the same input shapes and dtypes as ``get_inputs`` on the meta device."""
    from hawkeye_env.tasks.registry import list_tasks, task_module

    checked = 0
    for spec in list_tasks():
        module = task_module(spec)
        for shape in [*spec.gpu_shapes, *spec.cpu_shapes]:
            with torch.device("meta"):
                plain = module.get_inputs(**dict(shape))
            assert _signature(probe_inputs(module, dict(shape))) == _signature(plain), (spec.id, shape)
            checked += 1
    assert checked >= 50


def test_the_probe_of_random_draws_imports_no_symbolic_shapes():
    """torch's meta ``randn`` imports sympy through ``torch._check`` (hundreds of modules, seconds of
    CPU in every judge process on a loaded host); the probe's draws do not."""
    code = ("import sys, torch\n"
            "from hawkeye_env.judge.shared.inputs import probe_inputs\n"
            "class T:\n"
            "    get_inputs = staticmethod(lambda n: [torch.randn(n, n, dtype=torch.bfloat16), torch.rand(n),\n"
            "                                         torch.randn_like(torch.empty(n)), torch.zeros(n)])\n"
            "out = probe_inputs(T, {'n': 4})\n"
            "assert [o.device.type for o in out] == ['meta'] * 4 and out[0].dtype == torch.bfloat16\n"
            "plain = 'sympy' in sys.modules\n"
            "with torch.device('meta'):\n"
            "    torch.randn(2)\n"
            "print(plain, 'sympy' in sys.modules)\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=str(Path(__file__).resolve().parents[2]), env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]  # the probe did not import it; a plain meta draw does
