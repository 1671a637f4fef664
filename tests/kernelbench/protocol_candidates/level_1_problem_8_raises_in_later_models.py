"""LayerNorm that is right, but raises in every model after the first ``OWN_TRIALS`` its process
builds. The worker builds one model per trial, the verdict's own trials first and KernelBench's
five after them (``plan.plan_trials``); with ``OWN_TRIALS`` set to the number of our trials (the
test sets it from the plan) it raises in each of KernelBench's trials and in none of ours."""

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
    tl.store(y_ptr + row * n + offs, normed * w + b, mask=mask)


OWN_TRIALS = 5
BUILT = []


class ModelNew(nn.Module):
    def __init__(self, normalized_shape: tuple):
        super().__init__()
        BUILT.append(1)
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x):
        if len(BUILT) > OWN_TRIALS:
            raise RuntimeError("no kernel for this model")
        n = self.ln.weight.numel()
        y = torch.empty_like(x)
        layernorm_kernel[(x.numel() // n,)](x, self.ln.weight, self.ln.bias, y, n, self.ln.eps,
                                            BLOCK=triton.next_power_of_2(n))
        return y
