"""Per-row cross-entropy loss over a large vocabulary: ``loss[m] = logsumexp(logits[m]) - logits[m, t_m]``.

Inputs: ``logits`` float32 ``[M, V]`` and ``targets`` int64 ``[M]`` in ``[0, V)``; output float32
``[M]`` (``F.cross_entropy(..., reduction="none")``). Targets are integers, so the judge keeps
``get_inputs``'s values drawn under the trial seed; the logits are redrawn.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from hawkeye_env.tasks.spec import TaskSpec


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, targets, reduction="none")


def get_inputs(M: int = 4096, V: int = 128256):
    return [torch.randn(M, V, dtype=torch.float32), torch.randint(0, V, (M,), dtype=torch.int64)]


def get_init_inputs(M: int = 4096, V: int = 128256):
    return []


SPEC = TaskSpec(
    id="cross_entropy_fp32",
    family="reduction",
    description=(
        "Per-row cross-entropy: for float32 logits [M, V] and int64 targets [M] (0 <= t < V), "
        "return float32 [M] with loss[m] = logsumexp(logits[m, :]) - logits[m, targets[m]], as "
        "F.cross_entropy(reduction='none'). V is a language-model vocabulary (128256 at the timed "
        "shape), too large for one block: stream each row once with an online max/sum-of-exp."
    ),
    module="hawkeye_env.tasks.cross_entropy_fp32.task",
    dtypes=("float32", "int64"),
    cpu_shapes=({"M": 7, "V": 1000}, {"M": 3, "V": 5003}),
    gpu_shapes=({"M": 4096, "V": 128256},),
    flops=lambda M, V, **_: 4.0 * M * V,
    bytes_moved=lambda M, V, **_: 4.0 * M * V + 8.0 * M + 4.0 * M,
    tags=("online_softmax", "row_reduction"),
    solution="hawkeye_env.tasks.cross_entropy_fp32.solution",
    # Memory-bound: the bar is 90% of the measured device-to-device copy bandwidth.
    targets={"copy_bandwidth": 0.9},
    layouts=("offset",),
    value_distributions=("zeros", "repeated", "large", "skewed_ids"),
    # Logits of +-1e4 in fp32: a logsumexp without the running max overflows.
    large_magnitude=1e4,
)
