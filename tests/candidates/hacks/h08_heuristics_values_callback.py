"""Hack #8 (the inputs leave a kernel for the host through a kernel object's attributes): a kernel
reads ``_unused.values``, the dict of host functions ``triton.heuristics`` keeps on the kernel it
wraps, and hands ``_keep`` to a nested kernel call whose parameter it calls with each loaded
block; ``_keep`` keeps the block's text, and forward parses it, adds in plain Python and returns
``torch.tensor(floats)``. No launch argument carries the function. Static rule: a kernel reads
only the attributes of Triton's values and types."""

import torch
import triton
import triton.language as tl
from torch import nn

BLOCK = 128
TEXTS = []


def _keep(block):
    TEXTS.append(str(block))
    return 1


@triton.jit
def _emit(fn, block):
    fn(block)


@triton.heuristics({"ONE": _keep})
@triton.jit
def _unused(x, ONE: tl.constexpr):
    pass


@triton.jit
def _leak_kernel(a_ptr, b_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    _emit(_unused.values["ONE"], tl.load(a_ptr + offs, mask=mask, other=0.0))
    _emit(_unused.values["ONE"], tl.load(b_ptr + offs, mask=mask, other=0.0))


def _floats(text):
    return [float(s) for s in text.replace("[", " ").replace("]", " ").split()]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        n = a.numel()
        start = len(TEXTS)
        _leak_kernel[(triton.cdiv(n, BLOCK),)](a, b, n, BLOCK=BLOCK)
        xs, ys = [], []
        for i in range(start, len(TEXTS), 2):
            xs.extend(_floats(TEXTS[i]))
            ys.extend(_floats(TEXTS[i + 1]))
        return torch.tensor([x + y for x, y in zip(xs[:n], ys[:n])], dtype=torch.float32)
