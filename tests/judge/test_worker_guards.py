"""The worker's guards against patched judge state and predictable seeds: ``JudgeSnapshot`` sees
a replaced or new attribute of ``torch.Tensor`` (not a dunder Python adds itself);
``planted_attributes`` names each tensor that carries instance attributes, which would shadow the
methods the judge calls on it after the op recorder has closed; and every seed a trial, its call on
new inputs or the candidate's constructor uses is one-way from the verdict's base seed; a tensor
built from data whose iteration runs Python is an op the recorder counts; and a kernel is launched
with data only (what Triton's objects hold included), its grid computed from the launch's own
arguments before an interpreted launch."""

from __future__ import annotations

import pytest
import torch

from hawkeye_env.judge.sandboxed.candidate import guards, launch_values


def test_the_snapshot_sees_a_new_or_replaced_tensor_attribute(monkeypatch):
    snapshot = guards.JudgeSnapshot()
    x = torch.ones(3)
    x.detach().cpu().clone()  # the judge's own calls change nothing
    assert snapshot.changed() == []
    monkeypatch.setattr(torch.Tensor, "detach", lambda t: t, raising=False)
    assert snapshot.changed() == ["torch.Tensor.detach"]
    monkeypatch.undo()
    monkeypatch.setattr(torch.nn.Module, "eval", lambda m: m)
    assert snapshot.changed() == ["torch.nn.modules.module.Module.eval"]


def test_planted_attributes_names_each_tensor_that_carries_one():
    out, honest = torch.zeros(2), torch.zeros(2)
    out.detach = lambda: honest
    found = guards.planted_attributes([honest, out, 3.0], "output")
    assert found == ["output 1 carries detach"]
    assert guards.planted_attributes([honest, torch.nn.Parameter(torch.ones(1))], "input") == []


def test_the_constructor_seed_is_one_way_from_the_trials():
    from hawkeye_env.judge.sandboxed.candidate.worker import build_seed

    seeds = [build_seed(s) for s in range(64)]
    assert len(set(seeds)) == 64 and all(0 <= s < 2**63 for s in seeds)
    assert all(b != s for s, b in enumerate(seeds)) and build_seed(7) == build_seed(7)


def test_trial_seeds_are_one_way_from_the_base_and_from_each_other():
    from hawkeye_env.judge.parent.trial_plan import plan_trials
    from hawkeye_env.judge.shared.inputs import derived_seed, fresh_seed
    from hawkeye_env.tasks.registry import get_task

    trials = plan_trials(get_task("vector_add_fp32"), "cpu", 12345, protocol="kernelbench")
    seeds = [t["seed"] for t in trials]
    assert len(set(seeds)) == len(seeds) and all(0 <= s < 2**31 for s in seeds)
    assert seeds[0] == derived_seed(12345, "trial0") and seeds[1] - seeds[0] != seeds[2] - seeds[1]
    assert fresh_seed(seeds[-1]) not in (seeds[-1] + 1, *seeds)


class _Items(torch.nn.ParameterList):
    """A container whose iteration runs Python: what ``torch.tensor`` must not call unseen."""


def test_a_tensor_built_from_data_that_runs_python_counts_as_an_op_no_allowlist_holds(monkeypatch):
    for name in guards.TENSOR_DATA_FUNCTIONS:  # the hook replaces these; restore them after the test
        monkeypatch.setattr(torch, name, getattr(torch, name))
    monkeypatch.setattr(torch.Tensor, "new_tensor", torch.Tensor.new_tensor)
    guards.install_tensor_data_hook()
    guards.install_tensor_data_hook()  # idempotent: one count per call, not two
    items = _Items()
    items.append(1.0)
    with guards.OpRecorder() as recorder:
        torch.tensor([1.0, (2, 3.0)][0])
        torch.tensor([[1, 2], (3, 4)])
        torch.as_tensor(torch.ones(2))
        torch.ones(1).new_tensor([True, 2])
    assert recorder.ops[guards.TENSOR_DATA_OP] == 0
    with guards.OpRecorder() as recorder:
        torch.tensor(items)
        torch.as_tensor([items])
        torch.ones(1).new_tensor(items)
        torch.asarray(range(3))
    assert recorder.ops[guards.TENSOR_DATA_OP] == 4
    assert torch.tensor(items).tolist() == [1.0]  # outside a recorder: torch's own result, uncounted


def test_plain_data_is_numbers_tensors_and_exact_lists_and_tuples_of_them():
    assert guards.plain_data([1, 2.0, (True, 3j), torch.ones(2), torch.nn.Parameter(torch.ones(1))])

    class Sneaky(list):
        pass

    assert not guards.plain_data([Sneaky([1])]) and not guards.plain_data(range(2))
    deep: list = [1.0]
    for _ in range(40):
        deep = [deep]
    assert not guards.plain_data(deep)  # nested past 32: refused, never walked without bound


def test_a_kernel_is_launched_with_plain_values_and_triton_objects_only():
    import triton.language as tl

    plain = [torch.ones(2), torch.nn.Parameter(torch.ones(1)), 3, 2.5, True, "ieee", None, torch.float16,
             tl.float32, tl.constexpr(4), (1, (2, torch.zeros(1))), torch.Size([2, 3])]
    assert all(launch_values.launch_value(v) for v in plain)
    refused = [[], {}, {1}, print, lambda: 0, object(), [].append, (1, [2]), torch.nn.Linear(1, 1)]
    assert not any(launch_values.launch_value(v) for v in refused)


def test_an_object_of_tritons_is_a_launch_value_only_when_it_holds_data():
    """``tl.constexpr(f)`` calls ``f`` when a kernel calls it, and a heuristics kernel keeps the
    candidate's functions: what Triton's objects hold is checked like an argument."""
    import triton
    import triton.language as tl
    from triton.tools.tensor_descriptor import TensorDescriptor

    @triton.jit
    def kernel(x, BLOCK: tl.constexpr = 4):
        pass

    @triton.jit(repr=print)
    def named(x):
        pass

    plain = [tl.constexpr(tl.float16), tl.tuple([1, 2]), tl.pointer_type(tl.float32), kernel,
             TensorDescriptor.from_tensor(torch.zeros(16, 16), [8, 8]), triton.reinterpret(torch.zeros(4), tl.float32)]
    assert all(launch_values.launch_value(v) for v in plain)
    refused = [tl.constexpr(print), tl.constexpr([].append), tl.constexpr(torch.nn.Linear(1, 1)),
               tl.constexpr([print]), tl.constexpr({1: 2}), triton.Config({"a": print}), named,
               triton.heuristics({"BLOCK": lambda args: 4})(kernel),
               triton.autotune([triton.Config({})], key=[])(kernel)]
    assert not any(launch_values.launch_value(v) for v in refused)
    assert launch_values.kernel_defaults(kernel) == [4]


def test_an_interpreted_grid_callable_gets_the_launchs_own_arguments_by_name():
    """As Triton's compiled launcher calls it: the interpreter's own call would come inside the
    launch, with its pointers, while ``tl`` is patched."""
    import triton
    import triton.language as tl

    @triton.jit
    def kernel(x_ptr, n, BLOCK: tl.constexpr = 4):
        pass

    seen = []
    x = torch.zeros(3)
    grid = launch_values.raw_grid(kernel, lambda meta: seen.append(meta) or (2,), (x, 3), {"num_warps": 4})
    assert grid == (2,) and seen[0].keys() == {"x_ptr", "n", "BLOCK"}
    assert seen[0]["x_ptr"] is x and seen[0]["n"] == 3 and seen[0]["BLOCK"] == 4
    with pytest.raises(TypeError):  # a callable in place of the grid would be called inside the launch
        launch_values.raw_grid(kernel, lambda meta: (lambda args: (1,)), (x, 3), {})


def test_importing_the_guards_leaves_triton_unimported():
    """The worker imports the guards before it sets Triton's interpreter flag: a Triton import there
    would fix Triton in its GPU mode, and every CPU kernel would fail (a parent without the flag)."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    code = ("import sys, hawkeye_env.judge.sandboxed.candidate.guards; "
            "print(sorted(m for m in sys.modules if m.startswith('triton')))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
