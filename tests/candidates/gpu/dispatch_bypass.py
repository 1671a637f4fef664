"""docs/threat-model.md #8 past the op recorder: the answer computed by a torch op
with torch's dispatch to Python modes switched off, so the worker's op recorder never sees it; a
decoy kernel launch writes zeros. Statically rejected (a private torch attribute); with static
checks off the worker's own outputs are right, but the replay runs only what the plan recorded
(the decoy kernel): its outputs are zeros, and the verdict is incorrect."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def zero_kernel(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros((BLOCK,), dtype=tl.float32), mask=offs < n)


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(a)
        n = out.numel()
        zero_kernel[(triton.cdiv(n, 1024),)](out, n, BLOCK=1024)
        with torch._C._DisableTorchDispatch():
            out.copy_(a + b)
        return out
