"""The interpreter's device-call fast path (``hawkeye_env/judge/sandboxed/common/interpreter/calls.py``): a launch still
patches and restores ``triton.language``, helpers called inside it no longer walk the language
again, and what the kernel computes is unchanged, including a helper whose module names
``triton.language.core`` on its own."""

from __future__ import annotations

import os

import pytest
import torch
import triton
import triton.language as tl
import triton.language.core as tlc

from hawkeye_env.judge.sandboxed.common.interpreter.calls import install_device_call_fast_path

pytestmark = pytest.mark.skipif(os.environ.get("TRITON_INTERPRET") != "1",
                                reason="the fast path is for the CPU interpreter (TRITON_INTERPRET=1)")


@triton.jit
def _scale(x, s):
    return x * s


@triton.jit
def _core_add(x, y):  # a helper whose globals hold triton.language.core too
    return tlc.where(x > 0, x + y, y)


@triton.jit
def _helpers_kernel(x_ptr, out_ptr, N, CALLS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < N
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in tl.static_range(CALLS):
        acc = _core_add(_scale(x, i + 1.0), acc)
    tl.store(out_ptr + offs, tl.exp(acc * 1e-3), mask=mask)


def _run(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    _helpers_kernel[(1,)](x, out, x.numel(), CALLS=8, BLOCK=64)
    return out


def test_helpers_skip_the_walk_and_compute_the_same(monkeypatch):
    from triton.runtime import interpreter

    real = getattr(interpreter._patch_lang, "__wrapped__", interpreter._patch_lang)  # Triton's own
    x = torch.randn(50, generator=torch.Generator().manual_seed(0))
    calls = []

    def counting(fn):
        calls.append(fn.__name__)
        return real(fn)

    monkeypatch.setattr(interpreter, "_patch_lang", counting)
    slow = _run(x)
    slow_calls = list(calls)
    assert slow_calls.count("_scale") == 8 and slow_calls.count("_core_add") == 8  # the walk, per call

    calls.clear()
    install_device_call_fast_path()
    install_device_call_fast_path()  # idempotent: one wrapper
    before = (tl.load, tlc.load, tl.tensor.__add__, tl.math.exp)
    fast = _run(x)
    assert calls == ["_helpers_kernel"], calls  # the launch patches; no helper walks again
    assert torch.equal(fast, slow)
    expected = torch.exp(sum(torch.where(x * k > 0, x * k, torch.zeros(())) for k in range(1, 9)) * 1e-3)
    torch.testing.assert_close(fast, expected)
    assert (tl.load, tlc.load, tl.tensor.__add__, tl.math.exp) == before  # the launch restored them


def _function_seeing(**names):
    """A plain function whose module globals are ``names``."""
    scope = dict(names)
    exec("def helper():\n    pass\n", scope)
    return scope["helper"]


def test_a_language_module_the_launch_did_not_patch_is_patched(monkeypatch):
    """With ``triton.language`` swapped and ``triton.language.core`` not, a helper that sees only
    the first is skipped and one that also sees the second takes the full patch. (The probes are
    set explicitly: Triton never restores what a helper call swapped, so an earlier interpreted
    kernel may have left ``triton.language.core`` swapped in this process.)"""
    from triton.runtime import interpreter

    def builtin(*args, **kwargs):  # stands in for a Triton builtin not swapped yet
        return None

    setattr(builtin, tlc.TRITON_BUILTIN, True)
    swapped = lambda *a, **k: None  # noqa: E731 - stands in for the interpreter's version

    seen = []
    monkeypatch.setattr(interpreter, "_patch_lang", lambda fn: seen.append(fn) or interpreter._LangPatchScope())
    install_device_call_fast_path()
    sees_tl, sees_core = _function_seeing(tl=tl), _function_seeing(tl=tl, core=tlc)
    for owner, name in ((tl, "load"), (tlc, "load"), (tl.tensor, "__add__"), (tl.math, "exp")):
        monkeypatch.setattr(owner, name, builtin, raising=False)
    interpreter._patch_lang(sees_tl)  # nothing swapped yet: patched
    assert seen == [sees_tl]
    for owner, name in ((tl, "load"), (tl.tensor, "__add__"), (tl.math, "exp")):
        monkeypatch.setattr(owner, name, swapped, raising=False)
    interpreter._patch_lang(sees_tl)
    assert seen == [sees_tl]  # skipped
    interpreter._patch_lang(sees_core)  # triton.language.core's load is still a builtin
    assert seen == [sees_tl, sees_core]
    monkeypatch.setattr(tlc, "load", swapped)
    interpreter._patch_lang(sees_core)
    assert seen == [sees_tl, sees_core]  # both swapped: skipped
