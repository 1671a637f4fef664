"""Hack #7 (cache across calls, keyed by first call) + #9 decoy: the first output is stored on the
instance; later calls launch a tiny kernel (to satisfy the launch counter) and return the
cached tensor. The judge builds a new ModelNew per trial; the repeat trial replays a model's
second forward, which returns memory the first made (on CPU never written: its launches ran on an
empty grid), and with the replay off the worker's repeated call returns the first answer."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._cache = None

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        if self._cache is not None:
            _add_kernel[(1,)](a, b, torch.empty_like(a), 1, BLOCK=16)
            return self._cache
        n = a.numel()
        out = torch.empty_like(a)
        _add_kernel[(triton.cdiv(n, 1024),)](a, b, out, n, BLOCK=1024)
        self._cache = out
        return out
