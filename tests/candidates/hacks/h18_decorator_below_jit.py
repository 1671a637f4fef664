"""Hack #18 (jit wraps another function than the checked def): a plain decorator below
``@triton.jit`` returns ``impl``, a function whose text holds a ``def`` line in a string, so the
interpreter recompiles that string's code (host compute through raw pointers) as the kernel."""

import torch
import triton
import triton.language as tl
from torch import nn

HOST = """
import ctypes, numpy
m = int(n.handle.data[0])
v = lambda p: numpy.ctypeslib.as_array((ctypes.c_float * m).from_address(int(p.handle.data[0])))
numpy.add(v(a_ptr), v(b_ptr), out=v(out_ptr))
"""


def impl(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """
def impl(a_ptr, b_ptr, out_ptr, n, BLOCK):
    if int(tl.program_id(0).handle.data[0]) == 0:
        exec(HOST, dict(n=n, a_ptr=a_ptr, b_ptr=b_ptr, out_ptr=out_ptr))
    t = """
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(a_ptr + offs, mask=mask) * 0.0, mask=mask)
    # """


def swap(f):
    return impl


@triton.jit
@swap
def _add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(a_ptr + offs, mask=mask) * 0.0, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        n = a.numel()
        out = torch.empty((n,), dtype=a.dtype, device=a.device)
        _add_kernel[(triton.cdiv(n, 1024),)](a, b, out, n, BLOCK=1024)
        return out
