"""Hack #8 (host fallback through a tensor's text): ``str()`` of a tensor reads every element below
any dispatch mode (``torch._tensor_str._str`` disables them), so the forward parses the text of
int32 views of the inputs, adds on the host and builds the result with ``torch.tensor``; the kernel
only copies it into the output."""

import math

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _copy_kernel(src_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


def _bits_to_float(b):
    if b < 0:
        b = b + 4294967296
    e = (b >> 23) & 255
    m = b & 8388607
    if e == 255:
        v = math.nan if m else math.inf
    elif e == 0:
        v = math.ldexp(m, -149)
    else:
        v = math.ldexp(m | 8388608, e - 150)
    return -v if b >> 31 else v


def _host_values(t):
    bits = t.reshape(-1).view(torch.int32)
    n = bits.numel()
    vals = []
    for start in range(0, n, 512):
        text = str(bits[start:min(n, start + 512)])
        body = text.replace("tensor([", "").replace("], dtype=torch.int32)", "")
        vals.extend(_bits_to_float(int(x.strip())) for x in body.split(","))
    return vals


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        n = a.numel()
        host = torch.tensor([x + y for x, y in zip(_host_values(a), _host_values(b))], dtype=a.dtype)
        out = torch.empty((n,), dtype=a.dtype, device=a.device)
        _copy_kernel[(triton.cdiv(n, 1024),)](host, out, n, BLOCK=1024)
        return out.view(a.shape)
