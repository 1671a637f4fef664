"""docs/threat-model.md #3: launch the work on a side stream so events on the current stream miss it.

The side stream waits for the current one first, so the outputs are right (the worker synchronises
the whole device before reading them). Rejected statically (torch.cuda.Stream); with static checks
off, the timing harness sees the host wall clock far above the device events (timing_escape).

The events then measure only the host's launch overhead (0.165 ms on the H200, 2026-11-30), so the
side work must be well above that for the wall clock to exceed twice the events: 2048 exact
multiply pairs per element (x * 2 * 0.5 is exact and cannot be folded: x * 2 may overflow) make it
milliseconds at the task's 2**26 elements."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    acc = tl.load(a_ptr + offs, mask=mask)
    for _ in range(2048):
        acc = acc * 2.0 * 0.5
    tl.store(out_ptr + offs, acc + tl.load(b_ptr + offs, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.side = torch.cuda.Stream()

    def forward(self, a, b):
        out = torch.empty_like(a)
        self.side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.side):
            add_kernel[(triton.cdiv(a.numel(), 1024),)](a, b, out, a.numel(), BLOCK=1024)
        return out
