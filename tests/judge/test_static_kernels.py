"""The text rules of ``static_kernels.py``: the source is decoded as it was checked, and a kernel is
compiled by Triton's CPU interpreter from the lines that were checked; and the module's first
statement that can run code counts decorators, class bases and ``raise`` (``static_scopes``)."""

from __future__ import annotations

import ast

import pytest

from hawkeye_env.judge.parent.static.rules import check_source
from hawkeye_env.judge.parent.static.scopes import runs_code
from tests.judge.test_static_allowlist import ESCAPE_HEAD as HEAD

MODEL = "\n\nclass ModelNew(nn.Module):\n    def forward(self, a, b):\n        return a\n"
KERNEL = ("@triton.jit\ndef k(p, B: tl.constexpr):\n    x = tl.load(p + tl.arange(0, B))\n"
          "    tl.store(p + tl.arange(0, B), x)\n")


def _messages(source: str) -> str:
    return "\n".join(f.message for f in check_source(source))


@pytest.mark.parametrize("declaration", ["# -*- coding: unicode_escape -*-", "# coding: utf-7",
                                         "# vim: set fileencoding=latin-1 :", "# coding=cp037"])
def test_a_coding_declaration_other_than_utf8_is_refused(declaration):
    assert "a coding declaration of" in _messages(declaration + "\n" + HEAD + MODEL)


def test_an_unknown_coding_is_refused_and_utf8_passes():
    assert "refused by Python" in _messages("# coding: no-such-codec\n" + HEAD + MODEL)
    assert check_source("# -*- coding: utf-8 -*-\n" + HEAD + MODEL) == []
    assert check_source("\n# coding: utf-8\n" + HEAD + MODEL) == []


@pytest.mark.parametrize("kernel,fragment", [
    # a string holding a def line: the interpreter would compile from it
    ('@triton.jit\ndef k(p, B: tl.constexpr):\n    s = """\ndef k(p, B):\n    pass\n"""\n', "begins with 'def '"),
    # a nested def with the kernel's name
    ("@triton.jit\ndef k(p, B: tl.constexpr):\n    def k(p, B):\n        pass\n", "begins with 'def '"),
    # a kernel in a function, a class body or applied as a function
    ("def make():\n    @triton.jit\n    def k(p, B: tl.constexpr):\n        pass\n    return k\n",
     "jit is allowed only as the decorator"),
    ("class Holder:\n    @triton.jit\n    def k(p, B: tl.constexpr):\n        pass\n",
     "jit is allowed only as the decorator"),
    ("def f(p, B: tl.constexpr):\n    pass\n\n\nk = triton.jit(f)\n", "jit is allowed only as the decorator"),
    ("j = triton.jit\n", "jit is allowed only as the decorator"),
    # the alias of from-import and Gluon's jit follow the same rule
    ("from triton import jit as J\n\n\ndef f(p):\n    pass\n\n\nk = J(f)\n", "jit is allowed only as the decorator"),
    ("from triton.experimental import gluon\n\n\ndef f(p):\n    pass\n\n\nk = gluon.jit(f)\n",
     "jit is allowed only as the decorator"),
])
def test_kernels_are_compiled_from_the_checked_lines(kernel, fragment):
    assert fragment in _messages(HEAD + kernel + MODEL)


@pytest.mark.parametrize("kernel,fragment", [
    # jit must receive the checked def: nothing between them
    ("def swap(f):\n    return f\n\n\n@triton.jit\n@swap\ndef k(p):\n    pass\n", "jit is not its innermost"),
    # above jit, only Triton's kernel wrappers
    ("def wrap(f):\n    return f\n\n\n@wrap\n@triton.jit\ndef k(p):\n    pass\n", "a decorator other than"),
    # inspect's tokenize ends the block at a lone backslash; CPython's parser does not
    ("@triton.jit\ndef k(p):\n    x = 1\n\\\n    y = 2\n", "inspect ends its block"),
    ("@triton.jit\ndef\tk(p):\n    pass\n", "its header line does not begin with 'def '"),
])
def test_kernel_decorators_and_blocks_are_what_the_interpreter_reads(kernel, fragment):
    assert fragment in _messages(HEAD + kernel + MODEL)


def test_honest_kernels_pass():
    source = HEAD + KERNEL + '''

@triton.jit(do_not_specialize=["n"])
def k2(p, n, B: tl.constexpr):
    """A docstring that mentions def and define."""
    x = tl.load(p + tl.arange(0, B))  # def in a comment is no line beginning with it
    tl.store(p + tl.arange(0, B), x)


@triton.autotune(configs=[triton.Config({"B": 16})], key=["n"])
@triton.jit
def k3(p, n, B: tl.constexpr):
    pass
''' + MODEL
    assert check_source(source) == []


@pytest.mark.parametrize("statement,runs", [
    ("import math", False),
    ('"""doc"""', False),
    ("X = (1, 2.0, 'a', triton.cdiv)", False),
    ("X: int = 3", False),
    ("def f(x, y=1, *, z: tl.constexpr = 2):\n    return f(x)", False),
    ("class C:\n    A = 1\n\n    def f(self):\n        return self.A", False),
    ("@launch\ndef f():\n    pass", True),
    ("@triton.jit\ndef f(p):\n    pass", True),
    ("class C(Base):\n    pass", True),
    ("class C:\n    @launch\n    def f(self):\n        pass", True),
    ("raise Own", True),
    ("with x:\n    pass", True),
    ("for i in x:\n    pass", True),
    ("X = f()", True),
    ("X = lambda: f()", True),
    ("def f(x=g()):\n    pass", True),
])
def test_statements_that_can_run_code(statement, runs):
    assert runs_code(ast.parse(statement).body[0]) is runs


def test_a_binding_after_a_decorator_is_too_late_for_interpreter_globals():
    source = """import torch
import torch.nn as nn
import triton
import triton.language as tl


def peek():
    return _patch_attr


def launch(f):
    return f


@launch
def unused():
    pass


_patch_attr = None


""" + KERNEL + MODEL
    assert "_patch_attr is not surely bound" in _messages(source)
    assert check_source(source.replace("@launch\n", "")) == []


def _kernel(body: str, params: str = "p, B: tl.constexpr", head: str = "") -> str:
    lines = "".join(f"    {line}\n" for line in body.splitlines())
    kernel = f"@triton.jit\ndef leak(p_ptr, {params}):\n    x = tl.load(p_ptr + tl.arange(0, B))\n"
    return f"{HEAD}{head}\n\n{kernel}{lines}{MODEL}"


# (kernel body, module-level head, what the finding says): what would hand a kernel's data to the host
KERNEL_LEAKS = [
    ("SINK.append(str(x))", "SINK = []", "reads the module-level SINK"),
    ("p.append(x)", "", "calls .append()"),
    ("raise ValueError(x)", "", "raise"),
    ("try:\n    tl.store(p_ptr, x)\nexcept Exception:\n    pass", "", "try"),
    ("q = f'{x}'", "", "an f-string"),
    ("print(x)", "", "reads the builtin print"),
    ("y = repr(x)", "", "reads the builtin repr"),
    ("helper(x)", "def helper(v):\n    return v", "reads the module-level helper"),
    ("g = tl.load\ng2 = max\ny = g2(x, 0)\nh = p\nh2 = h\nh2(x)", "", "calls the local h2"),
    ("p.y = x", "", "a store to a subscript or an attribute"),
    ("TABLE[0] = x", "TABLE = [0]", "a store to a subscript or an attribute"),
    ("f = lambda v: v", "", "lambda"),
    ("y = p.values", "", "reads .values, not an attribute of Triton's values or types"),
    ("y = leak.kwargs", "", "reads .kwargs, not an attribute of Triton's values or types"),
    ("zeros((1,), out=p)", "from torch import zeros", "calls torch.zeros, not a function of Triton's"),
    ("torch.empty((1,), out=p)", "", "calls torch.empty, not a function of Triton's"),
]


@pytest.mark.parametrize(("body", "head", "fragment"), KERNEL_LEAKS)
def test_a_kernel_body_that_could_hand_its_data_to_the_host_is_refused(body, head, fragment):
    messages = _messages(_kernel(body, head=head))
    assert f"kernel leak: {fragment}" in messages, messages


def test_a_kernel_parameter_defaults_to_a_constant():
    """The interpreter passes a default to the kernel as it passes an argument, unchecked at launch."""
    refused = _messages(_kernel("p(x)", params="B: tl.constexpr, p=print"))
    assert "kernel leak: a parameter's default is not a constant" in refused, refused
    assert check_source(_kernel("tl.store(p_ptr, x)", params="B: tl.constexpr = 4, q=None, r=2 * 3")) == []


def test_what_kernels_honestly_do_passes():
    body = ("y = x.to(tl.float32) * SCALE + OFFSET\nfor i in range(2):\n    y = tl.maximum(y, float('-inf'))\n"
            "z = tl.sum(y, axis=0) if n > min(B, 4) else 0.0\nhelper(p_ptr, y, B)\nact(y)\n"
            "tl.store(p_ptr + tl.arange(0, B), y.reshape(B))")
    head = ("SCALE = 2.0\nOFFSET: tl.constexpr = tl.constexpr(-1 + 2 * 3)\n\n\n@triton.jit\n"
            "def helper(q, v, B: tl.constexpr):\n    tl.store(q + tl.arange(0, B), v)")
    source = _kernel(body, params="n, act: tl.constexpr, B: tl.constexpr", head=head)
    assert check_source(source) == [], _messages(source)
