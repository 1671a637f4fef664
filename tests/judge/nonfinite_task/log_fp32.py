"""A task whose reference is NaN on the judge's inputs: ``out = log(x)`` of float32 ``x [N]``.

Every distribution the judge draws (normal, uniform U(-0.5, 1.5), Student-t3) has negative
values, so the float64 reference is NaN in about half of the elements of every trial and no trial
can be scored (docs/threat-model.md #25). Used by ``tests/judge/test_nonfinite_reference.py``.
"""

from __future__ import annotations

import torch
from torch import nn

from hawkeye_env.tasks.spec import TaskSpec


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log(x)


def get_inputs(N: int = 4096):
    return [torch.randn(N, dtype=torch.float32)]


def get_init_inputs(N: int = 4096):
    return []


SPEC = TaskSpec(
    id="log_fp32_nonfinite_probe", family="elementwise", description="Natural log of a float32 vector.",
    module="log_fp32", dtypes=("float32",), cpu_shapes=({"N": 1000},), gpu_shapes=({"N": 4096},),
    flops=lambda N, **_: float(N), bytes_moved=lambda N, **_: 8.0 * N,
)
