"""Hack #6 (a kernel argument that names its own memory range): an ``nn.ModuleDict`` whose entries
answer ``untyped_storage``, ``data_ptr`` and ``nbytes`` passed to a launch would make the CPU
interpreter's memory bounds take the range [1, 2**62), and a kernel that turns integers into
pointers then rewrites a module global to the builtin ``exec`` as in ``h06_kernel_raw_memory``. The
worker refuses the dict at launch (``launch_values.launch_value``); the bounds would not take its range
either (``tests/judge/test_interpreter_bounds.py``)."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _ld(addr):
    return tl.load(addr.to(tl.pointer_type(tl.int64)))


@triton.jit
def _find(d, prefix, length):
    keys = _ld(d + 32)
    lib = (_ld(keys + 8) >> 8) & 255
    nent = _ld(keys + 24)
    entries = keys + 32 + (1 << lib)
    slot = keys * 0
    for i in range(nent):
        key = _ld(entries + 16 * i)
        safe = tl.where(key == 0, keys, key)
        ok = (_ld(safe + 16) == length) & ((_ld(safe + 48) & 1099511627775) == prefix)
        slot = tl.where(ok & (key != 0), entries + 16 * i + 8, slot)
    return slot


@triton.jit
def _arm(f, span):
    f = f.to(tl.int64)
    glob = _ld(f + 16)
    bi = _ld(f + 24)
    exec_slot = _find(bi, 1667594341, 4)
    helper_slot = _find(glob, 435677848936, 6)
    tl.store(helper_slot.to(tl.pointer_type(tl.int64)), _ld(exec_slot))


@triton.jit
def _add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(a_ptr + offs, mask=mask) * 0.0, mask=mask)


class Const(nn.Module):
    def __init__(self, value):
        super().__init__()
        self.value = value

    def forward(self):
        return self.value


class Whole(nn.Module):
    def __init__(self):
        super().__init__()
        self.parts = nn.ModuleDict({"data" + "_ptr": Const(1), "nb" + "ytes": Const(2 ** 62)})

    def forward(self):
        return self.parts


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
        fake = nn.ModuleDict({"untyped" + "_storage": Whole()})
        _arm[(1,)](int(repr(target).split(" at ")[1].replace(">", ""), 16), fake)
        helper(SRC, {"a": a, "b": b, "out": out})
        return out
