"""Hack #18 (inspect's block ends before the def): a line holding only a backslash ends the
kernel's block for ``inspect.getblock`` (pure-Python tokenize) but not for CPython's parser, so the
recompiled kernel loses its last line, the local ``exec = 0``, and its read of ``exec`` is the
builtin."""

import torch
import triton
import triton.language as tl
from torch import nn

HOST = ("import ctypes, numpy\n"
        "m = int(n.handle.data[0])\n"
        "v = lambda p: numpy.ctypeslib.as_array((ctypes.c_float * m).from_address(int(p.handle.data[0])))\n"
        "numpy.add(v(a_ptr), v(b_ptr), out=v(out_ptr))\n")


@triton.jit
def _add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(a_ptr + offs, mask=mask) * 0.0, mask=mask)
    exec(HOST, dict(n=n, a_ptr=a_ptr, b_ptr=b_ptr, out_ptr=out_ptr))  # noqa: F823
\
    exec = 0  # noqa: F841


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        n = a.numel()
        out = torch.empty((n,), dtype=a.dtype, device=a.device)
        _add_kernel[(triton.cdiv(n, 1024),)](a, b, out, n, BLOCK=1024)
        return out
