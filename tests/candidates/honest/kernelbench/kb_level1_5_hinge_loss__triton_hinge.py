"""KernelBench style: mean hinge loss reduced by one program into a 0-d output, with asserts and docstrings."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def hinge_loss_kernel(pred_ptr, target_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    """out[0] = mean(max(1 - pred * target, 0)) over n_elements, accumulated in float32."""
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, n_elements, BLOCK_SIZE):
        offsets = start + tl.arange(0, BLOCK_SIZE)
        mask = offsets < n_elements
        p = tl.load(pred_ptr + offsets, mask=mask, other=0.0)
        t = tl.load(target_ptr + offsets, mask=mask, other=0.0)
        acc += tl.where(mask, tl.maximum(1.0 - p * t, 0.0), 0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) / n_elements)


def triton_hinge_loss(predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean hinge loss of float32 ``predictions`` and ``targets`` of one shape; a 0-d float32 tensor."""
    assert predictions.shape == targets.shape, "predictions and targets must have the same shape"
    assert predictions.is_contiguous() and targets.is_contiguous(), "inputs must be contiguous"
    out = torch.empty((), device=predictions.device, dtype=predictions.dtype)
    hinge_loss_kernel[(1,)](predictions, targets, out, predictions.numel(), BLOCK_SIZE=1024)
    return out


class ModelNew(nn.Module):
    """Optimized hinge loss with a single-program Triton reduction."""

    def __init__(self):
        super(ModelNew, self).__init__()  # noqa: UP008

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        if torch.cuda.is_available():
            assert predictions.is_cuda and targets.is_cuda, "inputs must be on CUDA"
        return triton_hinge_loss(predictions.contiguous(), targets.contiguous())
