"""Hack #29 (a call-count bomb in a unit's cached buffer): a vector add that counts its calls in the
last element of ``units.persistent_splitk.kernel.arrival_counters``' buffer (made on its first call and
handed to every later one, so the count persists in real use) and skips reading ``b`` on its 3rd and 4th
call. Recorded on the forward that made the buffer, the count would restart on every replayed call; the
worker makes the units' cached buffers before each recorded forward (``unit_caches.py``), so the buffer
is a constant the repeat trial's run of calls carries."""

import torch
import triton
import triton.language as tl
from torch import nn

from units.persistent_splitk.kernel import arrival_counters


@triton.jit
def _add(a_ptr, b_ptr, out_ptr, count_ptr, n, stride_a, stride_b, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    count = tl.load(count_ptr)
    keep_b = (count < 2) | (count > 3)
    a = tl.load(a_ptr + offs * stride_a, mask=mask)
    b = tl.load(b_ptr + offs * stride_b, mask=mask)
    tl.store(out_ptr + offs, a + tl.where(keep_b, b, 0.0), mask=mask)


@triton.jit
def _step(count_ptr):
    tl.store(count_ptr, tl.load(count_ptr) + 1)


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        n = a.numel()
        counts = arrival_counters(a.device, 1)
        count = counts[counts.numel() - 1:]
        out = torch.empty((n,), dtype=a.dtype, device=a.device)
        _add[(triton.cdiv(n, 1024),)](a, b, out, count, n, a.stride(0), b.stride(0), BLOCK=1024)
        _step[(1,)](count)
        return out
