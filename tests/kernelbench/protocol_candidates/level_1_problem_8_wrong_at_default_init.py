"""LayerNorm with a wrong shortcut for the default affine parameters (weight 1, bias 0): it
halves the output there. KernelBench's trials keep the default initialisation and see the
shortcut; hawkeye's jitter every constant-initialised tensor, so they never do."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + row * n + offs, mask=mask, other=0.0)  # [BLOCK]
    w = tl.load(w_ptr + offs, mask=mask, other=1.0)  # [BLOCK]
    b = tl.load(b_ptr + offs, mask=mask, other=0.0)  # [BLOCK]
    mean = tl.sum(x, axis=0) / n
    centred = tl.where(mask, x - mean, 0.0)
    normed = centred / tl.sqrt(tl.sum(centred * centred, axis=0) / n + eps)
    custom = tl.sum(((w != 1.0) | (b != 0.0)).to(tl.int32), axis=0)
    tl.store(y_ptr + row * n + offs, tl.where(custom > 0, normed * w + b, normed * 0.5), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x):
        n = self.ln.weight.numel()
        y = torch.empty_like(x)
        layernorm_kernel[(x.numel() // n,)](x, self.ln.weight, self.ln.bias, y, n, self.ln.eps,
                                            BLOCK=triton.next_power_of_2(n))
        return y
