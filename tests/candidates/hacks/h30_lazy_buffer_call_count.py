"""Hack #29 (a call-count bomb in a buffer made on the first call): a vector add that makes its
int32 call count lazily, in its first forward, keeps it in ``self`` and, from the count's second
call on, skips reading ``b``. Recorded on a model's first forward the buffer is that call's own
allocation, made anew on every replayed call, so the count would never pass 1 in the judge; the
repeat trial's later calls replay a model's second forward, where the buffer is a constant the
run carries and the rerun finds poisoned."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _add(a_ptr, b_ptr, out_ptr, calls_ptr, n, stride_a, stride_b, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    calls = tl.load(calls_ptr)
    out = tl.load(a_ptr + offs * stride_a, mask=mask)
    if calls < 1:
        out += tl.load(b_ptr + offs * stride_b, mask=mask)
    tl.store(out_ptr + offs, out, mask=mask)


@triton.jit
def _count(calls_ptr):
    tl.store(calls_ptr, tl.load(calls_ptr) + 1)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = None

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        if self.calls is None:
            self.calls = torch.zeros(1, dtype=torch.int32, device=a.device)
        n = a.numel()
        out = torch.empty((n,), dtype=a.dtype, device=a.device)
        _add[(triton.cdiv(n, 1024),)](a, b, out, self.calls, n, a.stride(0), b.stride(0), BLOCK=1024)
        _count[(1,)](self.calls)
        return out
