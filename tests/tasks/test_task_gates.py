"""The gates a generated task passes before it is kept: a healthy task passes them all, and a
degenerate task of each kind is dropped with that kind's reason code."""

from __future__ import annotations

import random

import pytest

from hawkeye_env.task_gates.baselines import baselines
from hawkeye_env.task_gates.conformance import conformance
from hawkeye_env.task_gates.failure import GateFailure
from hawkeye_env.task_gates.informative import informative
from hawkeye_env.task_gates.pipeline import gate
from hawkeye_env.task_gates.reference import reference
from hawkeye_env.tasks.generate.families import FAMILIES
from tests.tasks.generated import planted, write_draft, write_source

TEMPLATE = '''"""A test task."""
import torch
from torch import nn

from hawkeye_env.tasks.spec import TaskSpec

CALLS = []


class Model(nn.Module):
    def forward(self, x):
        {body}


def get_inputs(M: int = 4096, N: int = 512):
    return [torch.randn(M, N)]


def get_init_inputs(M: int = 4096, N: int = 512):
    return []


SPEC = TaskSpec(id="{task_id}", family="elementwise", description="A test task.", module="{task_id}.task",
                dtypes=("float32",), cpu_shapes=({{"M": 5, "N": 33}}, {{"M": 7, "N": 17}}),
                gpu_shapes=({{"M": 4096, "N": 512}},), flops=lambda M, N, **_: M * N,
                bytes_moved=lambda M, N, **_: 8.0 * M * N, tags=({tags!r},))
'''
# kind of degenerate task -> (forward body, the reason code that must drop it)
DEGENERATE = {
    "zeros": ("return x * 0.0", "near_constant"),
    "constant": ("return torch.full_like(x, 3.0)", "near_constant"),
    "passthrough": ("return x * 1.0", "passthrough_pass"),
    # float32 output whose every value is a bfloat16: a bfloat16 kernel could not be told apart
    "lower_precision": ("return x.to(torch.bfloat16).to(x.dtype)", "lower_precision_pass"),
    "input_independent": ("return torch.sin(torch.arange(x.numel(), dtype=x.dtype)).reshape(x.shape) * 3.1",
                          "input_independent"),
    "nonfinite": ("return torch.log(x)", "nonfinite"),
    "nondeterministic": ("CALLS.append(1)\n        return x * len(CALLS)", "nondeterministic"),
    "reference_error": ("return x @ x", "reference_error"),
    "unknown_unit_tag": ("return torch.tanh(x)", "conformance"),
    "gpu_shape_fails": ("assert x.shape[0] < 1000, 'only small M'\n        return torch.tanh(x)", "meta_forward"),
}
# Tasks whose compiled baseline fails: ``baselines`` alone (a custom op without a fake kernel also
# fails the meta forward of the conformance gate, which would drop it first).
COMPILE = {
    "compile_fails": ("return torch.tanh(torch.ops.hawkeye_gate_test.twice(x))", "compile_error"),
    "compile_differs": ("if torch.compiler.is_compiling():\n            return torch.tanh(x) * 2\n"
                        "        return torch.tanh(x)", "compile_mismatch"),
}
CUSTOM_OP = '''

@torch.library.custom_op("hawkeye_gate_test::twice", mutates_args=())
def twice(x: torch.Tensor) -> torch.Tensor:
    return x * 2
'''


def _drop_code(run, *args) -> str:
    try:
        run(*args)
    except GateFailure as failure:
        return failure.code
    return ""


def _task(folder, kind: str, body: str, tags: str = "coalesced_access", extra: str = ""):
    task_id = f"degenerate_{kind}"
    return write_source(folder, task_id, TEMPLATE.format(body=body, task_id=task_id, tags=tags) + extra)


@pytest.mark.parametrize("kind", sorted(DEGENERATE))
def test_a_degenerate_task_is_dropped_with_its_reason(kind, tmp_path):
    body, code = DEGENERATE[kind]
    with planted(tmp_path):
        module = _task(tmp_path, kind, body, "no_such_unit" if kind == "unknown_unit_tag" else "coalesced_access")
        assert _drop_code(gate, module, 0, "none") == code


def test_a_task_whose_compiled_baseline_fails_is_dropped(tmp_path):
    with planted(tmp_path):
        for kind, (body, code) in COMPILE.items():
            module = _task(tmp_path, kind, body, extra=CUSTOM_OP if kind == "compile_fails" else "")
            assert _drop_code(baselines, module.SPEC, "capture") == code, kind
            assert _drop_code(baselines, module.SPEC, "none") == ""


def test_the_same_forward_done_right_passes_every_gate(tmp_path):
    with planted(tmp_path):
        module = write_source(tmp_path, "healthy", TEMPLATE.format(body="return torch.tanh(x) * 3.0",
                                                                   task_id="healthy", tags="coalesced_access"))
        assert _drop_code(gate, module, 0, "capture") == ""


@pytest.mark.parametrize("family", ["row_norm", "gemm", "indexing"])
def test_generated_tasks_pass_each_gate_in_turn(family, tmp_path):
    draft = FAMILIES[family][1](random.Random(2))
    with planted(tmp_path):
        module = write_draft(tmp_path, draft, f"gated_{family}")
        cpu, gpu = conformance(module, 0)
        assert cpu.nodes and gpu is not None and len(gpu.nodes) == len(cpu.nodes)
        outputs = reference(module.SPEC, 0)
        assert {dist for _, dist in outputs} >= {"normal", "uniform", "heavy_tailed", *module.SPEC.value_distributions}
        informative(module.SPEC, 0, outputs)
        baselines(module.SPEC, "none")
