"""Honest ``vector_add_fp32`` written the GPU way: ``@triton.heuristics`` (an unmasked path when the
length divides the block) stacked on a multi-config ``@triton.autotune``. The autotuner failed
under Triton's CPU interpreter ("0 active drivers") before ``install_interpreter_fixes``."""

import torch
import triton
import triton.language as tl
from torch import nn

BLOCK = 1024  # fp32 elements per program: 4 KiB per operand


@triton.heuristics({"EVEN": lambda args: args["n"] % BLOCK == 0})
@triton.autotune(configs=[triton.Config({}, num_warps=4), triton.Config({}, num_warps=8)], key=["n"])
@triton.jit
def _add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(out_ptr + offs, tl.load(a_ptr + offs) + tl.load(b_ptr + offs))
    else:
        mask = offs < n
        total = tl.load(a_ptr + offs, mask=mask) + tl.load(b_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, total, mask=mask)


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        a, b = a.contiguous(), b.contiguous()
        out = torch.empty_like(a)
        n = a.numel()
        _add_kernel[(triton.cdiv(n, BLOCK),)](a, b, out, n, BLOCK=BLOCK)
        return out
