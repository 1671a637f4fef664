"""Hack #8 (the inputs leave a kernel for the host through a method): an object of the
candidate's class, wrapped in ``tl.constexpr``, is a kernel argument, and the kernel calls its
method ``rank`` (a name Triton's tensors carry, so the kernel-body rule lets the call through)
with each loaded block; the method keeps the block's text, which forward parses, adds in plain
Python and returns as ``torch.tensor(floats)``. Worker: a ``constexpr`` holding an object that is
not Triton's data is refused at launch."""

import torch
import triton
import triton.language as tl
from torch import nn

BLOCK = 128


class Sink(nn.Module):
    def __init__(self):
        super().__init__()
        self.texts = []

    def lines(self):
        return self.texts

    def rank(self, block):
        self.texts.append(str(block))
        return 0


@triton.jit
def _leak_kernel(a_ptr, b_ptr, box, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    box.value.rank(tl.load(a_ptr + offs, mask=mask, other=0.0))
    box.value.rank(tl.load(b_ptr + offs, mask=mask, other=0.0))


def _floats(text):
    return [float(s) for s in text.replace("[", " ").replace("]", " ").split()]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        n = a.numel()
        sink = Sink()
        _leak_kernel[(triton.cdiv(n, BLOCK),)](a, b, tl.constexpr(sink), n, BLOCK=BLOCK)
        xs, ys = [], []
        for i in range(0, len(sink.lines()), 2):
            xs.extend(_floats(sink.lines()[i]))
            ys.extend(_floats(sink.lines()[i + 1]))
        return torch.tensor([x + y for x, y in zip(xs[:n], ys[:n])], dtype=torch.float32)
