"""Library style: autograd.Function layer norm with a contextlib device guard and aliased builtins."""

import contextlib
import functools
import os

import torch
import triton
import triton.language as tl
from torch import nn

try:
    from triton.language.extra import libdevice
except ImportError:
    libdevice = None

_IS_HIP = torch.version.hip is not None
_TRITON_VERSION = tuple(int(p) for p in triton.__version__.split(".")[:2] if p.isdigit())
_HAS_DRIVER = getattr(triton.runtime, "driver", None) is not None
_HAS_LIBDEVICE = libdevice is not None
_DEBUG = os.environ.get("MY_LIB_DEBUG", "0") == "1"

TORCH_TO_TRITON_DTYPE = {
    torch.float32: tl.float32,
    torch.float16: tl.float16,
    torch.bfloat16: tl.bfloat16,
    torch.float8_e4m3fn: tl.float8e4nv,
}

_sqrt = tl.sqrt


def ensure_contiguous(fn):
    """Decorator: call ``fn`` with every tensor argument made contiguous."""

    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):
        args = [a.contiguous() if isinstance(a, torch.Tensor) else a for a in args]
        kwargs = {k: (v.contiguous() if isinstance(v, torch.Tensor) else v) for k, v in kwargs.items()}
        return fn(ctx, *args, **kwargs)

    return wrapper


def _layer_norm_fwd_fused_py(X, Y, W, B, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    mean = 0
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / _sqrt(var + eps)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask).to(tl.float32)
        b = tl.load(B + cols, mask=mask).to(tl.float32)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        tl.store(Y + cols, y.to(tl.bfloat16), mask=mask)


_layer_norm_fwd_fused = triton.jit(_layer_norm_fwd_fused_py)


def _device_context(t: torch.Tensor):
    """The CUDA device guard of ``t``'s device, or a null context off CUDA."""
    return torch.cuda.device(t.device) if t.is_cuda else contextlib.nullcontext()


def layer_norm(x: torch.Tensor, normalized_shape: tuple, weight: torch.Tensor, bias: torch.Tensor,
               eps: float) -> torch.Tensor:
    """LayerNorm of bf16 ``x[..., N]`` over its last dimension with bf16 ``weight``/``bias [N]``."""
    y = torch.empty_like(x)
    x_arg = x.reshape(-1, x.shape[-1])
    M, N = x_arg.shape
    MAX_FUSED_SIZE = 65536 // x.element_size()
    BLOCK_SIZE = min(MAX_FUSED_SIZE, triton.next_power_of_2(N), 1024)
    num_warps = min(max(BLOCK_SIZE // 256, 1), 8)
    with _device_context(x):
        _layer_norm_fwd_fused[(M,)](x_arg, y, weight, bias, x_arg.stride(0), N, eps,
                                    BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps, num_ctas=1)
    return y


class LayerNormFunction(torch.autograd.Function):
    """Forward-only autograd wrapper around ``layer_norm``."""

    @staticmethod
    @ensure_contiguous
    def forward(ctx, x, normalized_shape, weight, bias, eps):
        if _DEBUG:
            print(f"[my_lib] layer_norm on {x.device} (hip={_IS_HIP}, triton={_TRITON_VERSION})")
        ctx.eps = eps
        out = layer_norm(x, normalized_shape, weight, bias, eps)
        ctx.mark_non_differentiable(out)
        return out

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("LayerNormFunction is forward-only")


class ModelNew(nn.Module):
    def __init__(self, hidden_size: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden_size, dtype=torch.bfloat16))
        self.bias = nn.Parameter(torch.zeros(hidden_size, dtype=torch.bfloat16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return LayerNormFunction.apply(x, (x.shape[-1],), self.weight, self.bias, self.eps)
