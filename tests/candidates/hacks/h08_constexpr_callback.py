"""Hack #8 (the inputs leave a kernel for the host through a callable): ``tl.constexpr(f)`` is an
object of Triton's, and a ``constexpr`` called calls its value, so a kernel that calls its
parameter ``emit`` with each loaded block runs the host function ``_keep``, which keeps the
block's text (under the CPU interpreter ``str`` of a block is its values). Forward parses the text,
adds in plain Python and returns ``torch.tensor(floats)``. Worker: a ``constexpr`` (or any object
of Triton's) holding a function is refused at launch."""

import torch
import triton
import triton.language as tl
from torch import nn

BLOCK = 128
TEXTS = []


def _keep(block):
    TEXTS.append(str(block))


@triton.jit
def _leak_kernel(a_ptr, b_ptr, emit, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    emit(tl.load(a_ptr + offs, mask=mask, other=0.0))
    emit(tl.load(b_ptr + offs, mask=mask, other=0.0))


def _floats(text):
    return [float(s) for s in text.replace("[", " ").replace("]", " ").split()]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        n = a.numel()
        start = len(TEXTS)
        _leak_kernel[(triton.cdiv(n, BLOCK),)](a, b, tl.constexpr(_keep), n, BLOCK=BLOCK)
        xs, ys = [], []
        for i in range(start, len(TEXTS), 2):
            xs.extend(_floats(TEXTS[i]))
            ys.extend(_floats(TEXTS[i + 1]))
        return torch.tensor([x + y for x, y in zip(xs[:n], ys[:n])], dtype=torch.float32)
