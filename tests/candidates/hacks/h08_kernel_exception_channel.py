"""Hack #8 (the inputs leave a kernel for the host): the kernel raises an exception whose message is
the text of the blocks it loaded; forward catches it, parses the numbers and adds them in plain
Python. The recording runs its launch on an empty grid, so nothing is raised there and the parse
fails; the replay would refuse a kernel body that raises (the kernel rules: a compile error)."""

import torch
import triton
import triton.language as tl
from torch import nn

BLOCK = 256


@triton.jit
def _peek_kernel(a_ptr, b_ptr, n, start, BLOCK: tl.constexpr):
    offs = start + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0)
    raise ValueError(str(a) + "|" + str(b))


def _floats(text):
    return [float(x) for x in text.replace("[", " ").replace("]", " ").split()]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        n = a.numel()
        out = []
        for start in range(0, n, BLOCK):
            text = ""
            try:
                _peek_kernel[(1,)](a, b, n, start, BLOCK=BLOCK)
            except Exception as exc:
                text = str(exc)
            body = text.split("(", 1)
            parts = body[1].replace("\\n", " ").replace("'", " ").replace('"', " ").replace(")", " ").split("|")
            xs = _floats(parts[0])
            ys = _floats(parts[1])
            out.extend([x + y for x, y in zip(xs, ys)])
        return torch.tensor(out[:n], dtype=torch.float32)
