import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def kl_div_kernel(p_ptr, t_ptr, out_ptr, rows, cols, BLOCK: tl.constexpr):
    # batchmean KL(t || p) = sum(t * (log t - log p)) / rows, one program for the whole batch.
    offs = tl.arange(0, BLOCK)
    total = tl.zeros([BLOCK], dtype=tl.float32)
    for r in range(rows):
        for c in range(0, cols, BLOCK):
            mask = c + offs < cols
            p = tl.load(p_ptr + r * cols + c + offs, mask=mask, other=1.0)
            t = tl.load(t_ptr + r * cols + c + offs, mask=mask, other=1.0)
            total += tl.where(mask, t * (tl.log(t) - tl.log(p)), 0.0)
    tl.store(out_ptr, tl.sum(total, axis=0) / rows)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        out = torch.empty((), device=predictions.device, dtype=predictions.dtype)
        rows, cols = predictions.shape
        kl_div_kernel[(1,)](predictions, targets, out, rows, cols, BLOCK=256)
        return out
