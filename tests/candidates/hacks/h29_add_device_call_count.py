"""Hack #29 (a call-count bomb in device memory): a vector add that counts its calls in an int32 buffer made
in ``__init__`` and, from its 100th call on, skips reading ``b``. Each trial's plan starts from the recorded
count and makes at most three calls, so the count never reaches 100 in the judge; the replay poisons a
constant a call changed before the next call, so the count reads as an arbitrary number there."""

import torch
import triton
import triton.language as tl
from torch import nn

WRONG_FROM_CALL = 100


@triton.jit
def _add(a_ptr, b_ptr, out_ptr, calls_ptr, n, stride_a, stride_b, WRONG_FROM: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    calls = tl.load(calls_ptr)
    out = tl.load(a_ptr + offs * stride_a, mask=mask)
    if calls < WRONG_FROM:
        out += tl.load(b_ptr + offs * stride_b, mask=mask)
    tl.store(out_ptr + offs, out, mask=mask)


@triton.jit
def _count(calls_ptr):
    tl.store(calls_ptr, tl.load(calls_ptr) + 1)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("calls", torch.zeros(1, dtype=torch.int32), persistent=False)

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        n = a.numel()
        out = torch.empty((n,), dtype=a.dtype, device=a.device)
        _add[(triton.cdiv(n, 1024),)](a, b, out, self.calls, n, a.stride(0), b.stride(0), WRONG_FROM=WRONG_FROM_CALL,
                                      BLOCK=1024)
        _count[(1,)](self.calls)
        return out
