"""Hack #18 (the CPU interpreter compiles other text than the checked kernel): Triton's CPU
interpreter recompiles a kernel from the last line of its source that begins with ``def ``. A
string literal in the kernel holds such a line and unchecked Python after it (host compute through
raw pointers); the checker sees a string, the interpreter runs it, and a kernel whose visible body
writes ``x * 0`` would be judged correct."""

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


@triton.jit
def _add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """
def _add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK):
    if int(tl.program_id(0).handle.data[0]) == 0:
        exec(HOST, dict(n=n, a_ptr=a_ptr, b_ptr=b_ptr, out_ptr=out_ptr))
    t = """
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(a_ptr + offs, mask=mask) * 0.0, mask=mask)
    # """


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        n = a.numel()
        out = torch.empty((n,), dtype=a.dtype, device=a.device)
        _add_kernel[(triton.cdiv(n, 1024),)](a, b, out, n, BLOCK=1024)
        return out
