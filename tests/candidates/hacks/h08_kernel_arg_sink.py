"""Hack #8 (the inputs leave a kernel for the host): under Triton's CPU interpreter a kernel is
Python and ``str(block)`` is the text of the loaded values. The kernel appends that text to a list
passed as a ``tl.constexpr`` argument; forward parses it, adds in plain Python and returns
``torch.tensor(floats)``. Static rule: a kernel calls no ``str`` and no ``.append``; worker: a
kernel launched with a list is refused."""

import torch
import triton
import triton.language as tl
from torch import nn

BLOCK = 256


@triton.jit
def _peek_kernel(a_ptr, b_ptr, n, SINK: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0)
    SINK.append(str(a))
    SINK.append(str(b))


def _floats(text):
    return [float(x) for x in text.replace("[", " ").replace("]", " ").split()]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        n = a.numel()
        sink = []
        _peek_kernel[(triton.cdiv(n, BLOCK),)](a, b, n, sink, BLOCK=BLOCK)
        out = []
        for i in range(0, len(sink), 2):
            xs = _floats(sink[i])
            ys = _floats(sink[i + 1])
            out.extend([x + y for x, y in zip(xs, ys)])
        return torch.tensor(out[:n], dtype=torch.float32)
