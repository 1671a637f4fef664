"""Every registered task's vendor baselines run on CPU at the task's first CPU shape: each returns
what ``Model.forward`` returns (same dtypes, within the task's tolerance against the float64
reference, inputs untouched) or raises ``BaselineUnavailable`` with a reason. ``cublas*`` baselines
are ``torch.matmul`` / ``F.linear`` and must run everywhere; ``torch._scaled_mm`` may be
unavailable. ``cublas_bf16`` baselines time one bf16 GEMM and nothing else once their operands are
cached. ``targets`` only name baselines the task has."""

from __future__ import annotations

import copy
import importlib

import pytest
import torch

from hawkeye_env.judge.parent.decide.correctness import compare, dtype_name
from hawkeye_env.judge.sandboxed.candidate.guards import OpRecorder
from hawkeye_env.judge.shared.inputs import make_inputs, randomize_parameters
from hawkeye_env.tasks.registry import list_tasks, task_module
from hawkeye_env.tasks.spec import ALLOCATION_AND_VIEW_OPS, BaselineUnavailable

CASES = [(spec, name) for spec in list_tasks() for name in spec.vendor_baselines]
CUBLAS_BF16 = [(spec, name) for spec, name in CASES if name == "cublas_bf16"]
JUDGE_TARGETS = {"eager", "compile", "copy_bandwidth"}
SEED = 0


def _resolve(target: str):
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def _as_list(out) -> list:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _model_and_inputs(spec, seed: int):
    """The reference model and inputs exactly as a judge trial draws them, first CPU shape."""
    module = task_module(spec)
    shape = dict(spec.cpu_shapes[0])
    dist = spec.distributions[0]
    torch.manual_seed(seed)
    model = module.Model(*module.get_init_inputs(**shape))
    randomize_parameters(model, dist, seed)
    return model, make_inputs(module, shape, dist, seed, "cpu")


def _reference64(model, inputs: list) -> list:
    args = [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]
    return _as_list(copy.deepcopy(model).double()(*args))


def test_some_tasks_declare_vendor_baselines():
    names = {name for _, name in CASES}
    assert {"cublas", "scaled_mm", "cublas_bf16"} <= names


@pytest.mark.parametrize("spec", [s for s in list_tasks() if s.targets], ids=lambda s: s.id)
def test_targets_name_declared_baselines(spec):
    assert set(spec.targets) <= JUDGE_TARGETS | set(spec.vendor_baselines)
    assert all(v > 0 for v in spec.targets.values())


@pytest.mark.parametrize(("spec", "name"), CASES, ids=[f"{s.id}-{n}" for s, n in CASES])
def test_vendor_baseline_matches_reference_or_is_unavailable(spec, name):
    fn = _resolve(spec.vendor_baselines[name])
    model, inputs = _model_and_inputs(spec, SEED)
    before = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
    native = _as_list(model(*inputs))
    try:
        outs = _as_list(fn(model, *inputs))
    except BaselineUnavailable as exc:
        assert str(exc).strip(), f"{spec.id}:{name} raised BaselineUnavailable without a reason"
        assert not name.startswith("cublas"), f"{spec.id}:{name} is torch.matmul and must run on CPU: {exc}"
        return
    for i, (x, y) in enumerate(zip(before, inputs)):
        if isinstance(x, torch.Tensor):
            assert torch.equal(x, y), f"{spec.id}:{name} changed input {i}"
    refs = _reference64(model, inputs)
    assert len(outs) == len(refs)
    for out, nat, ref in zip(outs, native, refs):
        assert type(out) is torch.Tensor and out.dtype == nat.dtype and out.shape == ref.shape
        verdict = compare(out, ref, out.dtype, spec.tolerance(dtype_name(out.dtype)))
        assert verdict["ok"], f"{spec.id}:{name}: {verdict['reason']}"


@pytest.mark.parametrize(("spec", "name"), CUBLAS_BF16, ids=[s.id for s, _ in CUBLAS_BF16])
def test_cublas_bf16_times_only_a_bf16_gemm(spec, name):
    """After the first call (made untimed by the judge) a call with fresh inputs runs one bf16
    ``mm`` of the task's [M, K] x [K, N] shape and no dequantization."""
    fn = _resolve(spec.vendor_baselines[name])
    model, inputs = _model_and_inputs(spec, SEED)
    first = fn(model, *inputs)
    _, fresh = _model_and_inputs(spec, SEED + 1)
    with OpRecorder() as rec:
        again = fn(model, *fresh)
    assert set(rec.ops) - ALLOCATION_AND_VIEW_OPS == {"mm"}, dict(rec.ops)
    assert rec.ops["mm"] == 1
    shape = spec.cpu_shapes[0]
    assert again.dtype == first.dtype == torch.bfloat16
    assert tuple(again.shape) == tuple(first.shape) == (shape["M"], shape["N"])


def test_fla_helpers_pass_heads_as_a_batch_without_copies():
    from hawkeye_env.tasks.shared.fla_baselines import fla_kernel, from_heads_as_batch, heads_as_batch

    x = torch.randn(2, 3, 5, 4)
    flat = heads_as_batch(x)
    assert flat.shape == (6, 5, 1, 4) and flat.data_ptr() == x.data_ptr()
    assert torch.equal(flat[4, :, 0], x[1, 1])
    assert torch.equal(from_heads_as_batch(flat, 2, 3), x)
    assert heads_as_batch(torch.randn(2, 3, 5)).shape == (6, 5, 1)
    with pytest.raises(BaselineUnavailable) as excinfo:
        fla_kernel("simple_gla", "chunk_simple_gla", torch.device("cpu"))
    assert str(excinfo.value)
