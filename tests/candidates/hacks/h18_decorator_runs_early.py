"""Hack #18 (a decorator runs code with no call node): ``@launch`` launches a kernel at import, so
the interpreter copies its globals (``_LangPatchScope``, ``_patch_attr``) into the module before the
candidate's placeholder bindings of those names run; a function reading them gets the interpreter's
own, and with them a ``getattr`` by string on any object."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(a_ptr + offs, mask=mask) * 0.0, mask=mask)


def peek():
    return [_LangPatchScope, _patch_attr]


SEEN = []


def launch(f):
    z = torch.zeros(4)
    _add_kernel[(1,)](z, z, z, 4, BLOCK=4)  # the interpreter puts its globals into this module
    SEEN.extend(peek())                     # runs before the dummy bindings below
    return f


@launch  # no ast.Call here: not "a statement that can run code"
def _unused():
    pass


_LangPatchScope = None  # dummies: "surely bound before the module's first statement that runs code"
_patch_attr = None


class Grab(SEEN[0]):
    def __init__(self):
        self._changes = []

    def grab(self, obj, name):
        try:
            SEEN[1](obj, name, print, None, self)  # calls self.set_attr: getattr(obj, name) lands in self._changes
        except AttributeError:
            pass  # the setattr after it fails on a read-only attribute; the getattr is recorded already
        return self._changes[-1][2]


HOST = "import numpy\nnumpy.add(a.numpy(), b.numpy(), out=out.numpy())"


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        n = a.numel()
        out = torch.empty((n,), dtype=a.dtype, device=a.device)
        _add_kernel[(triton.cdiv(n, 1024),)](a, b, out, n, BLOCK=1024)
        g = Grab()
        for k, v in g.grab(peek, "__builtins__").items():
            if k == "exec":
                v(HOST, dict(a=a, b=b, out=out))
        return out
