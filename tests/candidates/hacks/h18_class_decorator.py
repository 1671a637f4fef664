"""Hack #18 (a class decorator hands out the class): ``@grab class Setter`` passes the class to the
candidate's ``grab`` with no read of its name; ``HOLDER[0].setx(out, f)`` then calls the method with
the output tensor as ``self``, and ``self.detach = f`` plants an attribute on that one tensor. The
worker's reply calls ``o.detach()`` after the op recorder has closed: ``a + b`` computed on the
host, while the kernel writes zeros."""

import torch
import triton
import triton.language as tl
from torch import nn

HOLDER = []
STASH = []


def grab(cls):
    HOLDER.append(cls)
    return cls


@grab
class Setter:
    def setx(self, value):
        self.detach = value


@triton.jit
def _zero_kernel(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros((BLOCK,), dtype=tl.float32), mask=offs < n)


def make_fake(a, b):
    def fake():
        return a + b
    return fake


def plant(out, a, b):
    c = HOLDER[0]
    c.setx(out, make_fake(a, b))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        n = a.numel()
        out = torch.empty((n,), dtype=a.dtype, device=a.device)
        _zero_kernel[(triton.cdiv(n, 1024),)](out, n, BLOCK=1024)
        plant(out, a, b)
        return out
