"""Hack #8 (the inputs leave a kernel for the host through a parameter's default): the kernel's
parameter ``emit`` defaults to the host function ``_keep``, which the interpreter passes to the
kernel without the launch's argument check; the kernel calls it with each loaded block, ``_keep``
keeps the block's text, and forward parses it, adds in plain Python and returns
``torch.tensor(floats)``. Static rule: a kernel parameter's default is a constant; worker: a
launched kernel's defaults are checked like its arguments."""

import torch
import triton
import triton.language as tl
from torch import nn

BLOCK = 128
TEXTS = []


def _keep(block):
    TEXTS.append(str(block))


@triton.jit
def _leak_kernel(a_ptr, b_ptr, n, BLOCK: tl.constexpr, emit=_keep):
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
        _leak_kernel[(triton.cdiv(n, BLOCK),)](a, b, n, BLOCK=BLOCK)
        xs, ys = [], []
        for i in range(start, len(TEXTS), 2):
            xs.extend(_floats(TEXTS[i]))
            ys.extend(_floats(TEXTS[i + 1]))
        return torch.tensor([x + y for x, y in zip(xs[:n], ys[:n])], dtype=torch.float32)
