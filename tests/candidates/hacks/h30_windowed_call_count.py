"""Hack #29 (a call-count bomb with a window): a vector add that counts its calls in an int32 buffer made
in ``__init__``, beside a check word of the count, and skips reading ``b`` only on its 3rd and 4th call.
A count whose check word does not match (bytes it did not write: the replay's poisoning of changed
state) restarts from zero, so calls made after poisoned state are right; only calls made with the state
its own earlier calls left can be wrong. The repeat trial's run of calls with state carried, of a length
drawn from the verdict's seed (``trial_plan.carried_calls``), lands its checked call on the window for
some seeds and not for others."""

import torch
import triton
import triton.language as tl
from torch import nn

CHECK_MUL = 7919
CHECK_ADD = 13


@triton.jit
def _count_now(state_ptr, MUL: tl.constexpr, ADD: tl.constexpr):
    count = tl.load(state_ptr)
    check = tl.load(state_ptr + 1)
    return tl.where(check == count * MUL + ADD, count, 0)


@triton.jit
def _add(a_ptr, b_ptr, out_ptr, state_ptr, n, stride_a, stride_b, MUL: tl.constexpr, ADD: tl.constexpr,
         BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    count = _count_now(state_ptr, MUL, ADD)
    keep_b = (count < 2) | (count > 3)
    a = tl.load(a_ptr + offs * stride_a, mask=mask)
    b = tl.load(b_ptr + offs * stride_b, mask=mask)
    tl.store(out_ptr + offs, a + tl.where(keep_b, b, 0.0), mask=mask)


@triton.jit
def _step(state_ptr, MUL: tl.constexpr, ADD: tl.constexpr):
    count = _count_now(state_ptr, MUL, ADD) + 1
    tl.store(state_ptr, count)
    tl.store(state_ptr + 1, count * MUL + ADD)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("state", torch.tensor([0, CHECK_ADD], dtype=torch.int32), persistent=False)

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        n = a.numel()
        out = torch.empty((n,), dtype=a.dtype, device=a.device)
        _add[(triton.cdiv(n, 1024),)](a, b, out, self.state, n, a.stride(0), b.stride(0), MUL=CHECK_MUL,
                                      ADD=CHECK_ADD, BLOCK=1024)
        _step[(1,)](self.state, MUL=CHECK_MUL, ADD=CHECK_ADD)
        return out
