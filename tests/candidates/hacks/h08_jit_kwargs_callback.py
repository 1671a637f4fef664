"""Hack #8 (the inputs leave a kernel for the host through a kernel's jit options): ``_unused`` is
jitted with ``repr=_keep``, which the interpreted kernel keeps in its ``kwargs``; it is passed to
``_leak_kernel`` as an argument, which reads ``hk.kwargs["repr"]`` and hands it to a nested kernel
call whose parameter it calls with each loaded block. ``_keep`` keeps the block's text, and
forward parses it, adds in plain Python and returns ``torch.tensor(floats)``. Static rule: a
kernel reads only the attributes of Triton's values and types; worker: a kernel whose jit options
hold a function is refused as a launch argument."""

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


@triton.jit(repr=_keep)
def _unused(x, ONE: tl.constexpr):
    pass


@triton.jit
def _leak_kernel(a_ptr, b_ptr, n, hk, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    _emit(hk.kwargs["repr"], tl.load(a_ptr + offs, mask=mask, other=0.0))
    _emit(hk.kwargs["repr"], tl.load(b_ptr + offs, mask=mask, other=0.0))


def _floats(text):
    return [float(s) for s in text.replace("[", " ").replace("]", " ").split()]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        n = a.numel()
        start = len(TEXTS)
        _leak_kernel[(triton.cdiv(n, BLOCK),)](a, b, n, _unused, BLOCK=BLOCK)
        xs, ys = [], []
        for i in range(start, len(TEXTS), 2):
            xs.extend(_floats(TEXTS[i]))
            ys.extend(_floats(TEXTS[i + 1]))
        return torch.tensor([x + y for x, y in zip(xs[:n], ys[:n])], dtype=torch.float32)
