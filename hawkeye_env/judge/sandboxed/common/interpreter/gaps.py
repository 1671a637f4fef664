"""What a GPU runs and Triton's CPU interpreter does not, made to run the same under the interpreter.

Each gap failed an honest kernel on CPU with a runtime error (``tests/judge/test_interpreter_gaps.py``
has one kernel per gap):

* **Autotuning.** A ``@triton.autotune`` with more than one config benchmarks them through the
  GPU driver ("0 active drivers" on CPU). Under the interpreter the benchmark runs nothing and
  times every config alike, so the autotuner keeps the first config (``min`` keeps the first of
  equals) and goes on as after a GPU benchmark: its reset-to-zero hook runs, then the launch.
* **Builtins called outside ``triton.language``.** A launch swaps the builtins of
  ``triton.language`` (and ``tl.math``, ``tl.tensor``) for interpreter versions, so a builtin
  reached another way got no ``_semantic`` and raised "Did you forget to add @triton.jit": a
  module-level alias (``_exp = tl.exp``), any libdevice function. Every Triton builtin's wrapper
  now takes the interpreter's semantic when called without one *during a launch*; outside a
  launch it raises as before.
* **Float scalar arguments.** The GPU passes a Python ``float`` argument as an fp32 scalar; the
  interpreter passed the Python float through, which has no ``.to`` and promotes differently
  (``x_fp16 * eps`` stays fp16). It is now an fp32 scalar tensor.
* **libdevice** (``interpreter_libdevice``), computed with numpy.

What cannot run on CPU (inline PTX, a libdevice function without a numpy counterpart) makes the
launch raise ``NotCheckableOnCPU`` itself, not the ``InterpreterError`` Triton wraps it in.

Nothing here reads the candidate's module: only Triton's classes and modules are patched, so any
process that runs kernels under the interpreter can install it. Inert on a GPU, where kernels are
compiled and none of this is reached.
"""

from __future__ import annotations

import sys

import numpy as np

from hawkeye_env.judge.sandboxed.common.interpreter.not_checkable import NotCheckableOnCPU, not_checkable_cause

_MARK = "_hawkeye_gap"
_NO_SEMANTIC = ("Did you forget to add @triton.jit ? "
                "(`_semantic` argument must be provided outside of JIT functions.)")
_active_launches = 0  # interpreted launches in progress in this process (one thread runs kernels)


def _semantic_for_unpatched_builtin():
    """The interpreter's semantic for a builtin called without one inside a launch."""
    if _active_launches == 0:
        raise ValueError(_NO_SEMANTIC)
    from triton.runtime.interpreter import interpreter_semantic

    return interpreter_semantic


# The name the swapped wrappers look up in their own globals (``triton.language.core``'s).
_hawkeye_semantic_outside_jit = _semantic_for_unpatched_builtin


def _builtin_template(fn):
    def wrapper(*args, **kwargs):
        if kwargs.get("_semantic") is None:
            kwargs["_semantic"] = _hawkeye_semantic_outside_jit()
        return fn(*args, **kwargs)

    return wrapper


def _language_functions():
    """Every function of a loaded ``triton.language`` module, its classes' methods included."""
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith("triton.language"):
            continue
        for value in list(vars(module).values()):
            yield value
            if isinstance(value, type) and str(getattr(value, "__module__", "")).startswith("triton.language"):
                for member in list(vars(value).values()):
                    yield getattr(member, "__func__", getattr(member, "fget", member))


def _builtins_take_interpreter_semantic() -> None:
    """Swap the code of every builtin wrapper (``triton.language.core.builtin``'s closure) for
    ``_builtin_template``'s: same closure, a missing ``_semantic`` filled in during a launch."""
    import triton.language.core as core

    reference = core.builtin(lambda: None).__code__
    replacement = _builtin_template(None).__code__
    if reference.co_freevars != replacement.co_freevars:
        return
    core._hawkeye_semantic_outside_jit = _semantic_for_unpatched_builtin
    for fn in _language_functions():
        if getattr(fn, "__code__", None) is reference:
            fn.__code__ = replacement


def _counted_launch(call):
    """``GridExecutor.__call__`` counting launches in progress; a ``NotCheckableOnCPU`` under
    Triton's ``InterpreterError`` is raised as itself."""
    def launch(self, *args, **kwargs):
        global _active_launches
        _active_launches += 1
        try:
            return call(self, *args, **kwargs)
        except Exception as exc:
            cause = not_checkable_cause(exc)
            if cause is not None and cause is not exc:
                raise cause from None
            raise
        finally:
            _active_launches -= 1

    return launch


def _fp32_float_arguments(implicit_cvt):
    """``interpreter._implicit_cvt`` with a Python float as an fp32 scalar tensor, as the GPU
    passes it."""
    def cvt(arg):
        if isinstance(arg, float):
            import triton.language as tl
            from triton.runtime.interpreter import TensorHandle

            return tl.tensor(TensorHandle(np.array([arg], dtype=np.float32), tl.float32), tl.float32)
        return implicit_cvt(arg)

    return cvt


def _no_inline_asm(self, *args, **kwargs):
    raise NotCheckableOnCPU("inline assembly (tl.inline_asm_elementwise) runs only on a GPU")


def _no_benchmark(kernel_call, quantiles):
    """The autotuner's benchmarker under the interpreter: runs nothing, every config ties."""
    return [0.0 for _ in quantiles]


# ``Autotuner.do_bench`` (a cached property: the driver's benchmarker, or the one the decorator
# was given) under the interpreter.
_NO_BENCHMARKER = property(lambda self: _no_benchmark)


def _patch(owner, name: str, value) -> None:
    if not getattr(getattr(owner, name, None), _MARK, False):
        setattr(value, _MARK, True)
        setattr(owner, name, value)


def install_interpreter_gaps() -> None:
    """Patch Triton's interpreter, autotuner and libdevice modules (idempotent). Call it before
    the kernels' modules are imported (``from ...libdevice import tanh`` binds at import)."""
    import triton.language.extra.cuda.libdevice  # noqa: F401  (its builtins are swapped below)
    from triton.runtime import autotuner, interpreter

    from hawkeye_env.judge.sandboxed.common.interpreter.libdevice import install_libdevice

    install_libdevice()
    _builtins_take_interpreter_semantic()
    _patch(interpreter.GridExecutor, "__call__", _counted_launch(interpreter.GridExecutor.__call__))
    _patch(interpreter, "_implicit_cvt", _fp32_float_arguments(interpreter._implicit_cvt))
    _patch(interpreter.InterpreterBuilder, "create_inline_asm", _no_inline_asm)
    if vars(autotuner.Autotuner).get("do_bench") is not _NO_BENCHMARKER:
        autotuner.Autotuner.do_bench = _NO_BENCHMARKER


__all__ = ["install_interpreter_gaps"]
