"""RMSNorm backward over the last dimension with a learned scale, bfloat16 in and out.

The forward is ``rmsnorm_bf16``'s: ``y = x * rsqrt(mean(x^2, -1) + eps) * weight`` in float32,
rounded to bfloat16 once. Inputs: ``x`` bfloat16 ``[M, N]`` and ``grad_out`` bfloat16 ``[M, N]``
(the gradient of ``y``); the parameter ``weight`` is bfloat16 ``[N]``. Outputs: ``(dx, dweight)``,
bfloat16 ``[M, N]`` and ``[N]``, autograd of the forward (``shared.backward_common.gradients``):

    dx = rstd * (g - xhat * mean(g * xhat, -1)),  g = grad_out * weight,  xhat = x * rstd
    dweight = sum over rows of grad_out * xhat
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from hawkeye_env.tasks.shared.backward_common import gradients, upcast
from hawkeye_env.tasks.spec import Dim, ShapeFamily, TaskSpec


class Model(nn.Module):
    def __init__(self, hidden_size: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden_size, dtype=torch.bfloat16))

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = upcast(x)
        inv_rms = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return (xf * inv_rms * upcast(self.weight)).to(x.dtype)

    def forward(self, x: torch.Tensor, grad_out: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return gradients(self._forward, (x,), (self.weight,), grad_out)


def torch_rms_norm(model: Model, x: torch.Tensor, grad_out: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """PyTorch's own RMSNorm, forward and backward: autograd of ``F.rms_norm``, the path an
    ``nn.RMSNorm`` of a PyTorch model takes."""
    w = model.weight
    return gradients(lambda t: F.rms_norm(t, (t.shape[-1],), w, model.eps), (x,), (w,), grad_out)


def get_inputs(M: int = 16384, N: int = 4096):
    return [torch.randn(M, N, dtype=torch.bfloat16), torch.randn(M, N, dtype=torch.bfloat16)]


def get_init_inputs(M: int = 16384, N: int = 4096):
    return [N]


SPEC = TaskSpec(
    id="rmsnorm_bwd_bf16",
    family="normalization",
    description=(
        "RMSNorm backward. The forward (constructor Model(hidden_size=N, eps=1e-6), parameter "
        "`weight`, bfloat16 [N]) is y = x * rstd * weight with rstd = rsqrt(mean(x^2) + eps) per row "
        "of a bfloat16 x [M, N], computed in float32 and rounded to bfloat16 once. forward(x, grad_out) "
        "receives x and grad_out (bfloat16 [M, N], the gradient of y) and returns (dx, dweight): "
        "dx = rstd * (g - xhat * mean(g * xhat)) with g = grad_out * weight and xhat = x * rstd "
        "(bfloat16 [M, N]), and dweight = the sum over all M rows of grad_out * xhat (bfloat16 [N]). "
        "Recompute rstd rather than expecting it; accumulate in float32. The op is memory bound: "
        "read x and grad_out once, write dx once, and reduce dweight across rows in two stages "
        "(per-program float32 partial sums, then one column reduction) rather than with atomics."
    ),
    module="hawkeye_env.tasks.rmsnorm_bwd_bf16.task",
    dtypes=("bfloat16",),
    cpu_shapes=({"M": 13, "N": 96}, {"M": 9, "N": 200}),
    gpu_shapes=({"M": 16384, "N": 4096}, {"M": 4096, "N": 8192}),
    # Per element: x^2 (2), xhat (1), g (1), the g * xhat dot (2), dx (3), dweight (2).
    flops=lambda M, N, **_: 11.0 * M * N,
    # Read x and grad_out, write dx (bfloat16 each); read weight, write dweight.
    bytes_moved=lambda M, N, **_: 6.0 * M * N + 4.0 * N,
    tags=("row_reduction", "persistent_kernel"),
    solution="hawkeye_env.tasks.rmsnorm_bwd_bf16.solution",
    vendor_baselines={"torch_rms_norm": "hawkeye_env.tasks.rmsnorm_bwd_bf16.task:torch_rms_norm"},
    # Memory bound, as the forward: the bar is the forward's, 90% of the device-to-device copy
    # bandwidth, and torch.compile's fused backward.
    targets={"copy_bandwidth": 0.9, "compile": 1.0},
    shape_family=ShapeFamily(cpu={"M": Dim(1, 13), "N": Dim(1, 200)},
                             gpu={"M": Dim(1, 16384), "N": Dim(1, 8192)}),
    layouts=("offset", "sliced"),
    value_distributions=("zeros", "repeated", "large"),
    # As rmsnorm_bf16: x^2 of 1e4 is 1e8, fine in float32, past float16 (6.5e4).
    large_magnitude=1e4,
)
