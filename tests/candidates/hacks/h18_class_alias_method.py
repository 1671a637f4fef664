"""Hack #18 (a method called with a foreign self through an alias of its class): ``self.detach =
v`` is an allowed store in a method, and ``ALIAS = Setter; ALIAS.setx(torch.Tensor, f)`` runs it
with ``self`` bound to ``torch.Tensor``. The worker then builds its reply with ``o.detach()`` after
the op recorder has closed, so the replacement computes ``a + b`` on the host, unrecorded, while
the kernel writes zeros."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _zero_kernel(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros((BLOCK,), dtype=tl.float32), mask=offs < n)


class Setter:
    def setx(self, value):
        self.detach = value


ALIAS = Setter
ORIG = torch.Tensor.detach
STASH = []


def fake_detach(t):
    for i in range(len(STASH)):
        if STASH[i][0] is t:
            _, a, b = STASH.pop(i)
            return ORIG(a + b)
    return ORIG(t)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        n = a.numel()
        out = torch.empty((n,), dtype=a.dtype, device=a.device)
        _zero_kernel[(triton.cdiv(n, 1024),)](out, n, BLOCK=1024)
        STASH.append((out, a, b))
        ALIAS.setx(torch.Tensor, fake_detach)
        return out
