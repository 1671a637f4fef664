"""LayerNorm backward over the last dimension with affine weight and bias, bfloat16 in and out.

The forward is ``layernorm_bf16``'s: ``y = (x - mean) * rstd * weight + bias`` with
``rstd = rsqrt(biased var + eps)``, eps = 1e-5, in float32 and rounded to bfloat16 once. Inputs:
``x`` and ``grad_out``, bfloat16 ``[M, N]``; parameters ``weight`` and ``bias``, bfloat16 ``[N]``.
Outputs: ``(dx, dweight, dbias)``, bfloat16 ``[M, N]``, ``[N]``, ``[N]``, autograd of the forward
(``shared.backward_common.gradients``):

    dx = rstd * (g - mean(g, -1) - xhat * mean(g * xhat, -1)),  g = grad_out * weight
    dweight = sum over rows of grad_out * xhat,  dbias = sum over rows of grad_out
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from hawkeye_env.tasks.shared.backward_common import gradients, upcast
from hawkeye_env.tasks.spec import TaskSpec


class Model(nn.Module):
    def __init__(self, hidden_size: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden_size, dtype=torch.bfloat16))
        self.bias = nn.Parameter(torch.zeros(hidden_size, dtype=torch.bfloat16))

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = upcast(x)
        mean = xf.mean(-1, keepdim=True)
        var = (xf - mean).pow(2).mean(-1, keepdim=True)
        y = (xf - mean) * torch.rsqrt(var + self.eps) * upcast(self.weight) + upcast(self.bias)
        return y.to(x.dtype)

    def forward(self, x: torch.Tensor, grad_out: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return gradients(self._forward, (x,), (self.weight, self.bias), grad_out)


def torch_layer_norm(model: Model, x: torch.Tensor, grad_out: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """PyTorch's own LayerNorm kernels, forward and backward: autograd of ``F.layer_norm``, the path
    an ``nn.LayerNorm`` of a PyTorch model takes."""
    w, b = model.weight, model.bias
    return gradients(lambda t: F.layer_norm(t, (t.shape[-1],), w, b, model.eps), (x,), (w, b), grad_out)


def get_inputs(M: int = 16384, N: int = 4096):
    return [torch.randn(M, N, dtype=torch.bfloat16), torch.randn(M, N, dtype=torch.bfloat16)]


def get_init_inputs(M: int = 16384, N: int = 4096):
    return [N]


SPEC = TaskSpec(
    id="layernorm_bwd_bf16",
    family="normalization",
    description=(
        "LayerNorm backward with affine weight and bias. The forward (constructor "
        "Model(hidden_size=N, eps=1e-5), parameters `weight` and `bias`, bfloat16 [N]) is "
        "y = xhat * weight + bias with xhat = (x - mean) * rstd, rstd = rsqrt(biased var + eps), per "
        "row of a bfloat16 x [M, N], in float32, rounded to bfloat16 once. forward(x, grad_out) "
        "receives x and grad_out (bfloat16 [M, N], the gradient of y) and returns (dx, dweight, "
        "dbias): dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = grad_out * weight "
        "(bfloat16 [M, N]); dweight = the sum over all M rows of grad_out * xhat and dbias = the sum "
        "over all M rows of grad_out (bfloat16 [N] each). N is arbitrary. Recompute mean and rstd; "
        "accumulate in float32. Memory bound: read x and grad_out once, write dx once, and reduce "
        "dweight and dbias across rows in two stages (per-program float32 partial sums, then a "
        "column reduction)."
    ),
    module="hawkeye_env.tasks.layernorm_bwd_bf16.task",
    dtypes=("bfloat16",),
    cpu_shapes=({"M": 11, "N": 130}, {"M": 7, "N": 300}),
    gpu_shapes=({"M": 16384, "N": 4096}, {"M": 8192, "N": 5120}),
    # Per element: mean and variance (3), xhat (2), g (1), the two row sums (3), dx (4), the
    # dweight and dbias sums (3).
    flops=lambda M, N, **_: 16.0 * M * N,
    # Read x and grad_out, write dx (bfloat16 each); read weight and bias, write their gradients.
    bytes_moved=lambda M, N, **_: 6.0 * M * N + 8.0 * N,
    tags=("row_reduction", "persistent_kernel"),
    solution="hawkeye_env.tasks.layernorm_bwd_bf16.solution",
    vendor_baselines={"torch_layer_norm": "hawkeye_env.tasks.layernorm_bwd_bf16.task:torch_layer_norm"},
    # As rmsnorm_bwd_bf16: the forward's bar (90% of the copy bandwidth) and torch.compile.
    targets={"copy_bandwidth": 0.9, "compile": 1.0},
    layouts=("offset", "sliced"),
    value_distributions=("zeros", "repeated", "large"),
    # As layernorm_bf16: squares of 1e4 overflow float16, not float32.
    large_magnitude=1e4,
)
