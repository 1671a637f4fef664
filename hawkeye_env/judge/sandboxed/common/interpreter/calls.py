"""Device-function calls in Triton's CPU interpreter without re-patching ``triton.language``.

Under ``TRITON_INTERPRET=1`` a kernel launch swaps ``triton.language``'s builtins for interpreter
versions (``interpreter._patch_lang``) and restores them afterwards. Every call of a ``@triton.jit``
helper *inside* a kernel runs the same ``_patch_lang`` again, which walks every member of
``triton.language``, ``tl.tensor`` and ``tl.math`` (``inspect.getmembers``) to find builtins, and
finds none left to swap: the launch already swapped them. Kernels built from helpers pay this per
call: ``units/chunked_scan``'s delta-rule forward makes ~1,000 helper calls per launch at the CPU
shapes, and the walk was half its interpreted time (cProfile, triton 3.9).

``install_device_call_fast_path()`` wraps ``_patch_lang`` so that a call whose language modules are
already swapped returns an empty scope instead of walking them again. A launch (nothing swapped
yet) patches as before and restores as before; a helper that sees a language module the launch
did not swap (say ``triton.language.core`` imported under its own name) patches it as before. What
runs is the same interpreted code: only the repeated search is skipped. Inert on a GPU, where
kernels are compiled and the interpreter is never imported.
"""

from __future__ import annotations

import inspect

_MARK = "_hawkeye_device_call_fast_path"


def _swapped(lang, tl) -> bool:
    """Whether the launch already swapped ``lang``'s builtins: its ``load``, its tensor's
    ``__add__`` and (for ``triton.language``) ``tl.math.exp`` are no longer Triton builtins."""
    is_builtin = tl.core.is_builtin
    probes = [getattr(lang, "load", None), getattr(getattr(lang, "tensor", None), "__add__", None)]
    if lang is tl:
        probes.append(getattr(tl.math, "exp", None))
    return all(p is not None and not is_builtin(p) for p in probes)


def install_device_call_fast_path() -> None:
    """Wrap ``triton.runtime.interpreter._patch_lang`` once (idempotent); a Triton without it is
    left as it is."""
    import triton.language as tl
    from triton.runtime import interpreter

    original = getattr(interpreter, "_patch_lang", None)
    scope_type = getattr(interpreter, "_LangPatchScope", None)
    if original is None or scope_type is None or getattr(original, _MARK, False):
        return

    seen: dict = {}  # (fn, len(fn.__globals__)) -> the language modules among its globals

    def patch_lang(fn):
        key = (fn, len(fn.__globals__))
        langs = seen.get(key)
        if langs is None:
            langs = seen[key] = [v for v in fn.__globals__.values() if inspect.ismodule(v) and v in (tl, tl.core)]
        if langs and all(_swapped(lang, tl) for lang in langs):
            return scope_type()  # nothing to swap, nothing to restore
        return original(fn)

    setattr(patch_lang, _MARK, True)
    patch_lang.__wrapped__ = original
    interpreter._patch_lang = patch_lang
