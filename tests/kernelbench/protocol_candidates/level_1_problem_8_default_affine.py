"""LayerNorm that never reads its weight and bias: right for the default initialisation (weight
1, bias 0) that KernelBench's trials keep, wrong for the jittered ones hawkeye's trials draw
(docs/threat-model.md #13)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def normalise_kernel(x_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + row * n + offs, mask=mask, other=0.0)  # [BLOCK]
    mean = tl.sum(x, axis=0) / n
    centred = tl.where(mask, x - mean, 0.0)
    var = tl.sum(centred * centred, axis=0) / n
    tl.store(y_ptr + row * n + offs, centred / tl.sqrt(var + eps), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x):
        n = self.ln.weight.numel()
        y = torch.empty_like(x)
        normalise_kernel[(x.numel() // n,)](x, y, n, self.ln.eps, BLOCK=triton.next_power_of_2(n))
        return y
