"""The generator's grammar and writer: every family writes a task module that imports, runs at
its CPU shapes natively and in float64, and declares lower-bound counts; a seed always writes the
same tasks; a backward variant returns autograd's gradients of its forward."""

from __future__ import annotations

import copy
import doctest
import random

import pytest
import torch

from hawkeye_env.tasks import selection
from hawkeye_env.tasks.generate import backward, counts, dims, families, graph, ops, sampler, splits, writer
from hawkeye_env.tasks.generate.backward import backward_variant
from hawkeye_env.tasks.generate.families import FAMILIES, common
from hawkeye_env.tasks.generate.graph import eager_cost
from hawkeye_env.tasks.generate.splits import trace_module
from hawkeye_env.tasks.generate.writer import render
from tests.tasks.generated import planted, write_draft

SEEDS = (0, 1)


def _float64(module, shape: dict, inputs: list):
    model = module.Model(*module.get_init_inputs(**shape))
    return model, copy.deepcopy(model).double()(*[x.double() if x.is_floating_point() else x for x in inputs])


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family_writes_a_task_that_runs(family, tmp_path):
    with planted(tmp_path):
        for seed in SEEDS:
            draft = FAMILIES[family][1](random.Random(seed))
            task_id = draft.task_id(seed, 0)
            module = write_draft(tmp_path, draft, task_id)
            spec = module.SPEC
            assert spec.id == task_id and spec.module == f"{task_id}.task" and task_id.isidentifier()
            for shape in spec.cpu_shapes:
                torch.manual_seed(seed)
                inputs = module.get_inputs(**shape)
                model, ref = _float64(module, shape, inputs)
                out = model(*inputs)
                want = tuple(int(counts.evaluate(d, shape)) for d in draft.out_shape)
                assert out.dtype == getattr(torch, draft.out_dtype) and tuple(out.shape) == want
                assert ref.dtype == torch.float64 and bool(torch.isfinite(ref).all())
                assert spec.flops(**shape) > 0 and spec.bytes_moved(**shape) > 0
                # The floor is a lower bound: eager PyTorch moves at least that many bytes.
                assert eager_cost(trace_module(module, shape, "cpu"))["bytes"] >= spec.bytes_moved(**shape)


def test_a_seed_writes_the_same_tasks_and_seeds_differ():
    first = [render(sampler.draft_at(3, i), f"t{i}", f"t{i}.task", "") for i in range(12)]
    again = [render(sampler.draft_at(3, i), f"t{i}", f"t{i}.task", "") for i in range(12)]
    other = [render(sampler.draft_at(4, i), f"t{i}", f"t{i}.task", "") for i in range(12)]
    assert first == again
    assert sum(a != b for a, b in zip(first, other)) >= 10


def test_backward_variant_returns_autograd_of_the_forward(tmp_path):
    draft = FAMILIES["row_norm"][1](random.Random(11))
    variant = backward_variant(draft)
    assert variant is not None and variant.backward and variant.inputs[-1].name == "grad_out"
    with planted(tmp_path):
        fwd = write_draft(tmp_path, draft, "fwd_task")
        bwd = write_draft(tmp_path, variant, "bwd_task")
        shape = dict(fwd.SPEC.cpu_shapes[1])
        torch.manual_seed(0)
        model = fwd.Model(*fwd.get_init_inputs(**shape))
        inputs = [x.requires_grad_() if x.is_floating_point() else x for x in fwd.get_inputs(**shape)]
        out = model(*inputs)
        grad_out = torch.randn_like(out)
        want = torch.autograd.grad(out, [x for x in inputs if x.requires_grad] + list(model.parameters()), grad_out)
        bmodel = bwd.Model(*bwd.get_init_inputs(**shape))
        bmodel.load_state_dict(model.state_dict())
        with torch.no_grad():  # as the judge runs a reference
            got = bmodel(*[x.detach() for x in inputs], grad_out)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and torch.equal(g, w)


def test_no_backward_variant_without_a_gradient():
    quant = FAMILIES["quantization"][1](random.Random(0))
    assert backward_variant(quant) is None
    assert backward_variant(backward_variant(FAMILIES["row_norm"][1](random.Random(0)))) is None


def test_module_examples():
    for module in (backward, common, counts, dims, families, graph, ops, sampler, selection, splits, writer):
        assert doctest.testmod(module).failed == 0, module.__name__
