"""Library style: autograd.Function SwiGLU with aliased sigmoid and a kernel applied by call."""

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

_sigmoid = tl.sigmoid


def ensure_contiguous(fn):
    """Decorator: call ``fn`` with every tensor argument made contiguous."""

    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):
        args = [a.contiguous() if isinstance(a, torch.Tensor) else a for a in args]
        kwargs = {k: (v.contiguous() if isinstance(v, torch.Tensor) else v) for k, v in kwargs.items()}
        return fn(ctx, *args, **kwargs)

    return wrapper


def _swiglu_kernel_py(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    col_block = tl.program_id(1)
    cols = col_block * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    gate = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    up = tl.load(x_ptr + row * stride_x + n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    silu = gate * _sigmoid(gate)
    tl.store(out_ptr + row * stride_out + cols, (silu * up).to(tl.bfloat16), mask=mask)


swiglu_kernel = triton.jit(_swiglu_kernel_py)


def swiglu(x: torch.Tensor) -> torch.Tensor:
    """``silu(gate) * up`` for bf16 ``x [M, 2N]`` packed as ``[gate | up]``; bf16 ``[M, N]``."""
    assert x.shape[-1] % 2 == 0, "the last dimension packs gate and up"
    M, two_n = x.shape
    n_cols = two_n // 2
    out = torch.empty((M, n_cols), device=x.device, dtype=x.dtype)
    grid = lambda meta: (M, triton.cdiv(n_cols, meta["BLOCK_SIZE"]))  # noqa: E731
    swiglu_kernel[grid](x, out, n_cols, x.stride(0), out.stride(0), BLOCK_SIZE=512)
    return out


class SwigluFunction(torch.autograd.Function):
    """Forward-only autograd wrapper around ``swiglu``."""

    @staticmethod
    @ensure_contiguous
    def forward(ctx, x):
        if _DEBUG:
            print(f"[my_lib] swiglu on {x.device} (hip={_IS_HIP}, triton={_TRITON_VERSION})")
        out = swiglu(x)
        ctx.mark_non_differentiable(out)
        return out

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("SwigluFunction is forward-only")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return SwigluFunction.apply(x)
