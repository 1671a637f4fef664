"""KernelBench style: RMSNorm with super(ModelNew, self).__init__() and .contiguous() inputs."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _rms_norm_fwd(X, Y, W, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    _sq = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        _sq += a * a
    rstd = 1 / tl.sqrt(tl.sum(_sq, axis=0) / N + eps)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask).to(tl.float32)
        x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        y = x * rstd * w
        tl.store(Y + cols, y.to(tl.bfloat16), mask=mask)


def triton_rmsnorm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """RMSNorm of bf16 ``x[..., N]`` scaled by bf16 ``weight[N]``; returns bf16 of x's shape."""
    y = torch.empty_like(x)
    x_arg = x.reshape(-1, x.shape[-1])
    M, N = x_arg.shape
    MAX_FUSED_SIZE = 65536 // x.element_size()
    BLOCK_SIZE = min(MAX_FUSED_SIZE, triton.next_power_of_2(N))
    if N > BLOCK_SIZE:
        raise RuntimeError("This rms norm doesn't support feature dim >= 64KB.")
    num_warps = min(max(BLOCK_SIZE // 256, 1), 8)
    _rms_norm_fwd[(M,)](x_arg, y, weight, x_arg.stride(0), N, eps,
                        BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)
    return y


def _check_inputs(*tensors: torch.Tensor) -> None:
    """Assert every tensor is contiguous and, when a GPU is available, on CUDA."""
    for t in tensors:
        if torch.cuda.is_available():
            assert t.is_cuda, "Input tensors must be on a CUDA device"
        assert t.is_contiguous(), "Input tensors must be contiguous"


class ModelNew(nn.Module):
    """Optimized model: the forward runs in custom Triton kernels."""

    def __init__(self, hidden_size: int, eps: float = 1e-6):
        super(ModelNew, self).__init__()  # noqa: UP008
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden_size, dtype=torch.bfloat16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        _check_inputs(x)
        return triton_rmsnorm(x, self.weight, self.eps)
