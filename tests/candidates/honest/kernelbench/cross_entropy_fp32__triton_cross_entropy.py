"""KernelBench style: cross entropy with a target-dtype assert."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def cross_entropy_kernel(logits_ptr, targets_ptr, loss_ptr, n_cols, stride_row, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    row_ptr = logits_ptr + row * stride_row
    m = -float("inf")
    s = 0.0
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(row_ptr + cols, mask=cols < n_cols, other=-float("inf"))
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    target = tl.load(targets_ptr + row)
    target_logit = tl.load(row_ptr + target)
    loss = tl.log(s) + m - target_logit
    tl.store(loss_ptr + row, loss)


def triton_cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Per-row cross entropy (``reduction="none"``) of float32 ``logits [M, V]`` and int64 ``targets [M]``."""
    assert logits.ndim == 2 and targets.shape == (logits.shape[0],), "expected [M, V] logits and [M] targets"
    n_rows, n_cols = logits.shape
    loss = torch.empty((n_rows,), device=logits.device, dtype=logits.dtype)
    BLOCK_SIZE = min(triton.next_power_of_2(n_cols), 2048)
    cross_entropy_kernel[(n_rows,)](logits, targets, loss, n_cols, logits.stride(0), BLOCK_SIZE=BLOCK_SIZE)
    return loss


def _check_inputs(*tensors: torch.Tensor) -> None:
    """Assert every tensor is contiguous and, when a GPU is available, on CUDA."""
    for t in tensors:
        if torch.cuda.is_available():
            assert t.is_cuda, "Input tensors must be on a CUDA device"
        assert t.is_contiguous(), "Input tensors must be contiguous"


class ModelNew(nn.Module):
    """Optimized model: the forward runs in custom Triton kernels."""

    def __init__(self):
        super(ModelNew, self).__init__()  # noqa: UP008

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        logits = logits.contiguous()
        targets = targets.contiguous()
        _check_inputs(logits, targets)
        return triton_cross_entropy(logits, targets)
