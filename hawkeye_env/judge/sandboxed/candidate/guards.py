"""Run-time guards installed in the worker before any candidate code is imported.

- ``OpRecorder``: a ``TorchDispatchMode`` that records every aten op the candidate's forward
  dispatches, so torch fallbacks (docs/threat-model.md #8) show up whatever spelling reached them, and
  poisons a strided allocation's whole storage (``poison.py``; #1, #16).
- ``LaunchCounter``: wraps Triton's launch entry points (``JITFunction.run`` on GPU,
  ``InterpretedFunction.run`` under the interpreter) and counts launches by kernel module, so
  decoy kernels that are never launched are caught (#9). Under the interpreter a launch itself
  dispatches a few bookkeeping ops (``set_``, ``copy_``, ``new_empty``); those are accepted only
  inside a launch and only on CPU. A launch's arguments and its kernel's defaults must be data
  (``launch_value``), and under the interpreter a grid callable is called before the launch with
  the launch's own arguments (``raw_grid``).
- ``JudgeSnapshot``: identities of the timer and checker functions, and of the attributes of
  ``torch.Tensor``, ``torch.nn.Module`` and ``torch.nn.Parameter``, taken before the candidate is
  imported and compared after it ran (#6); ``planted_attributes``: tensors carrying instance
  attributes that would shadow their methods.
- ``thread_count``: Python threads and child processes of this process (#4).
- ``install_tensor_str_hook`` and ``install_tensor_data_hook``: the recorder counts what torch
  runs below every dispatch mode: a tensor turned into text, and a tensor built from an object
  whose iteration runs the candidate's Python (``plain_data``).
"""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from contextlib import contextmanager

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from hawkeye_env.judge.sandboxed.candidate.dispatch_mode import JudgeDispatchMode
from hawkeye_env.judge.sandboxed.candidate.launch_values import kernel_defaults, launch_value, raw_grid
from hawkeye_env.judge.sandboxed.candidate.poison import STRIDED_ALLOCATIONS, poison_storage

INTERPRETER_LAUNCH_OPS = frozenset({"set_", "copy_", "new_empty", "empty"})


class OpRecorder(JudgeDispatchMode):
    """Counts aten ops by overload-packet name while active; ``in_launch`` ops are kept apart."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: Counter[str] = Counter()
        self.launch_ops: Counter[str] = Counter()
        self.in_launch = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.overloadpacket.__name__
        (self.launch_ops if self.in_launch else self.ops)[name] += 1
        out = func(*args, **(kwargs or {}))
        if name in STRIDED_ALLOCATIONS and isinstance(out, torch.Tensor):
            poison_storage(out)  # the gaps between a strided view's elements too
        return out

    def disallowed(self, allowed: frozenset[str], device: str) -> dict[str, int]:
        """Ops outside ``allowed`` (and, on CPU, outside the interpreter's launch bookkeeping)."""
        bad = {k: v for k, v in self.ops.items() if k not in allowed}
        launch_allowed = allowed | (INTERPRETER_LAUNCH_OPS if device == "cpu" else frozenset())
        for k, v in self.launch_ops.items():
            if k not in launch_allowed:
                bad[k] = bad.get(k, 0) + v
        return bad


# Printing a tensor (str, repr, format, print) reads every element on the host below any dispatch
# mode (``torch._tensor_str._str`` runs under ``_disable_current_modes``): a forward could parse the
# text and compute on the host. Each such read counts as this op, which no allowlist holds.
TENSOR_STR_OP = "_tensor_str"


def install_tensor_str_hook() -> None:
    """Make every active ``OpRecorder`` count ``TENSOR_STR_OP`` when a tensor is turned into text
    (idempotent; in the worker, before the candidate is imported)."""
    import torch._tensor_str as tensor_str

    original = tensor_str._str
    if getattr(original, "_hawkeye_counted", False):
        return

    def counted(self, *args, **kwargs):
        _count(TENSOR_STR_OP)
        return original(self, *args, **kwargs)

    counted._hawkeye_counted = True
    tensor_str._str = counted


# ``torch.tensor(data)`` and its kin store ``data``'s elements in C++ with the Python dispatch key
# excluded, so no dispatch mode sees what runs there; iterating an object of the candidate's (a
# ``ParameterList`` subclass, say) runs its Python code inside. Data that is not plain (numbers and
# exact lists and tuples of them or of tensors, or a tensor) counts as this op, which no allowlist
# holds.
TENSOR_DATA_OP = "_tensor_from_object"
TENSOR_DATA_FUNCTIONS = ("tensor", "as_tensor", "asarray")
_PLAIN_SCALARS = (int, float, bool, complex)


def plain_data(data, depth: int = 0) -> bool:
    """Whether building a tensor from ``data`` runs no Python code of the candidate's: a number,
    a tensor or parameter, or an exact list or tuple of those (nested at most 32 deep)."""
    kind = type(data)
    if kind in _PLAIN_SCALARS or kind in (torch.Tensor, torch.nn.Parameter):
        return True
    if kind in (list, tuple) and depth < 32:
        return all(plain_data(x, depth + 1) for x in data)
    return False


def _count(op: str) -> None:
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

    for mode in _get_current_dispatch_mode_stack():
        if isinstance(mode, OpRecorder):
            (mode.launch_ops if mode.in_launch else mode.ops)[op] += 1


def install_tensor_data_hook() -> None:
    """Make every active ``OpRecorder`` count ``TENSOR_DATA_OP`` when ``torch.tensor``,
    ``torch.as_tensor``, ``torch.asarray`` or ``Tensor.new_tensor`` gets data that is not
    ``plain_data`` (idempotent; in the worker, before the candidate is imported, so its imports
    of these names bind the counting ones)."""

    def counting(original, at: int):
        """``original`` counting its data argument, the ``at``-th positional or ``data``/``obj``."""

        def wrapped(*args, **kwargs):
            data = args[at] if len(args) > at else kwargs.get("data", kwargs.get("obj"))
            if not plain_data(data):
                _count(TENSOR_DATA_OP)
            return original(*args, **kwargs)

        wrapped._hawkeye_counted = True
        wrapped.__name__ = getattr(original, "__name__", "tensor")
        return wrapped

    for owner, name, at in [*((torch, n, 0) for n in TENSOR_DATA_FUNCTIONS), (torch.Tensor, "new_tensor", 1)]:
        original = getattr(owner, name)
        if not getattr(original, "_hawkeye_counted", False):
            setattr(owner, name, counting(original, at))


def autotune_skipped() -> tuple[type, ...]:
    """The compile failures Triton's autotuner catches to skip a config (not the candidate's).
    Imported when a launch fails, never at this module's import: the worker imports the guards
    before it sets Triton's interpreter flag, and importing Triton's compiler first would fix
    Triton in its GPU mode."""
    from triton.compiler.errors import CompilationError
    from triton.runtime.errors import OutOfResources

    try:
        from triton.runtime.errors import PTXASError
    except ImportError:  # older Triton
        return (CompilationError, OutOfResources)
    return (CompilationError, OutOfResources, PTXASError)


def _outside_launch(grid, recorder: OpRecorder):
    """``grid`` run with ``recorder`` counting its ops as the forward's, not as the launch's own
    bookkeeping: the interpreter calls a grid callable inside the launch, where ``copy_`` and
    ``set_`` are accepted, and a grid's host code may not move data through them unseen."""

    def grid_fn(*args, **kwargs):
        recorder.in_launch -= 1
        try:
            return grid(*args, **kwargs)
        finally:
            recorder.in_launch += 1

    return grid_fn


class LaunchCounter:
    """Counts Triton kernel launches by the defining module of the kernel function."""

    def __init__(self) -> None:
        self.launches: Counter[str] = Counter()
        self.recorder: OpRecorder | None = None
        self.refusals: list[str] = []  # launches refused (``launch_value``) or failed under the interpreter
        self._installed = False

    def install(self) -> None:
        if self._installed:
            return
        from triton.runtime.jit import JITFunction

        targets = [JITFunction]
        try:
            from triton.runtime.interpreter import InterpretedFunction

            targets.append(InterpretedFunction)
        except ImportError:
            pass
        for cls in targets:
            cls.run = self._wrap(cls.run)
        self._installed = True

    def _wrap(self, original):
        counter = self
        interpreted = "interpreter" in getattr(original, "__module__", "")

        def run(fn_self, *args, **kwargs):
            name = getattr(getattr(fn_self, "fn", None), "__name__", "?")
            for value in (*args, *(v for k, v in kwargs.items() if k != "grid"), *kernel_defaults(fn_self)):
                if not launch_value(value):
                    kind = type(value).__name__
                    counter.refusals.append(f"kernel {name} was launched with a {kind}: a kernel takes tensors, "
                                            "numbers, strings, dtypes, descriptors and kernels")
                    raise TypeError(f"launch argument of type {kind} refused by the judge")
            if not kwargs.get("warmup", False):
                module = getattr(getattr(fn_self, "fn", None), "__module__", "?")
                counter.launches[module] += 1
            if interpreted and callable(kwargs.get("grid")) and not kwargs.get("warmup", False):
                kwargs["grid"] = raw_grid(fn_self, kwargs["grid"], args, kwargs)
            recorder = counter.recorder
            if recorder is not None:
                recorder.in_launch += 1
                if callable(kwargs.get("grid")):
                    kwargs["grid"] = _outside_launch(kwargs["grid"], recorder)
            try:
                return original(fn_self, *args, **kwargs)
            except BaseException as exc:
                if interpreted and not isinstance(exc, autotune_skipped()):  # its exception may carry what it read
                    counter.refusals.append(f"kernel {name} raised {type(exc).__name__} in the interpreter")
                raise
            finally:
                if recorder is not None:
                    recorder.in_launch -= 1

        run.__wrapped__ = original
        return run

    def reset(self) -> None:
        self.launches.clear()

    def own_launches(self, candidate_module: str) -> int:
        """Launches of kernels defined in the candidate or in the ``units`` package."""
        return sum(
            n for mod, n in self.launches.items()
            if mod == candidate_module or mod == "units" or mod.startswith("units.")
        )


JUDGE_MODULES = (
    "hawkeye_env.judge.sandboxed.candidate.guards", "hawkeye_env.judge.sandboxed.candidate.worker",
    "hawkeye_env.judge.sandboxed.common.timing", "hawkeye_env.judge.parent.decide.correctness",
    "hawkeye_env.judge.shared.inputs", "hawkeye_env.judge.sandboxed.common.interpreter.cpu_backend",
)


def _members(prefix: str, namespace: dict) -> dict[str, object]:
    """Functions and classes in ``namespace`` and the methods of those classes, by dotted name."""
    out: dict[str, object] = {}
    for name, obj in list(namespace.items()):
        if callable(obj):
            out[f"{prefix}.{name}"] = obj
        if isinstance(obj, type):
            for attr, member in list(vars(obj).items()):
                if callable(member) or isinstance(member, (staticmethod, classmethod, property)):
                    out[f"{prefix}.{name}.{attr}"] = member
    return out


def _judge_functions() -> dict[str, object]:
    """Everything whose replacement would blind the judge: its own modules' functions and
    methods, the timers, the comparison and copy functions, and Triton's launch entry points."""
    import sys

    fns: dict[str, object] = {
        "time.perf_counter": time.perf_counter,
        "torch.equal": torch.equal,
        "torch.allclose": torch.allclose,
        **{f"torch.{name}": getattr(torch, name) for name in TENSOR_DATA_FUNCTIONS},
        "torch.Tensor.new_tensor": torch.Tensor.new_tensor,
        "torch.Tensor.clone": torch.Tensor.clone,
        "torch.Tensor.copy_": torch.Tensor.copy_,
        "torch.Tensor.to": torch.Tensor.to,
        "torch.save": torch.save,
        "torch.use_deterministic_algorithms": torch.use_deterministic_algorithms,
        "TorchDispatchMode.__enter__": TorchDispatchMode.__enter__,
        "torch.cuda.synchronize": torch.cuda.synchronize,
        "torch.cuda.Event.record": torch.cuda.Event.record,
        "torch.cuda.Event.elapsed_time": torch.cuda.Event.elapsed_time,
    }
    for name in ("triton.runtime.jit", "triton.runtime.interpreter"):
        module = sys.modules.get(name)
        for cls_name in ("JITFunction", "InterpretedFunction"):
            cls = getattr(module, cls_name, None) if module else None
            if cls is not None:
                fns[f"{name}.{cls_name}.run"] = cls.run
    for name in JUDGE_MODULES:
        module = sys.modules.get(name)
        if module is not None:
            fns.update(_members(name, vars(module)))
    return fns


# Classes whose attributes the judge uses on the candidate's values once the op recorder is off
# (``Tensor.detach`` and ``cpu`` build a reply, ``Module.eval`` and ``__call__`` run the models):
# an attribute set on one of them, or one replaced, would run the candidate's code there.
WATCHED_CLASSES = (torch.Tensor, torch.nn.Module, torch.nn.Parameter)


def _class_members() -> dict[str, object]:
    """Every entry of the ``WATCHED_CLASSES``' own namespaces, by dotted name."""
    return {f"{cls.__module__}.{cls.__qualname__}.{k}": v for cls in WATCHED_CLASSES for k, v in vars(cls).items()}


def planted_attributes(values: list, label: str) -> list[str]:
    """``"{label} i carries ..."`` for each tensor of ``values`` with instance attributes. An
    honest tensor has none; one set on it (``out.detach = f``, through an attribute of self or a
    method called with the tensor as self) shadows the tensor's own method wherever the judge
    calls it, outside the op recorder."""
    found = []
    for i, v in enumerate(values):
        names = sorted(vars(v)) if isinstance(v, torch.Tensor) else []
        if names:
            found.append(f"{label} {i} carries {', '.join(names[:4])}")
    return found


def _dunder(key: str) -> bool:
    name = key.rsplit(".", 1)[-1]
    return name.startswith("__") and name.endswith("__")


class JudgeSnapshot:
    """Identities of the judge's functions and of the watched classes' attributes, taken before
    candidate import (docs/threat-model.md #6). A watched class's new attribute counts too, except a
    dunder, which Python itself may add (``__annotations__`` on first read)."""

    def __init__(self) -> None:
        self.before = _judge_functions()
        self.classes = _class_members()

    def changed(self) -> list[str]:
        after = _judge_functions()
        replaced = [k for k, fn in self.before.items() if after.get(k) is not fn]
        members = _class_members()
        replaced += [k for k, v in self.classes.items() if members.get(k) is not v]
        replaced += [k for k in members if k not in self.classes and not _dunder(k)]
        return sorted(replaced)


def thread_count() -> int:
    """Python threads plus child processes of this process (docs/threat-model.md #4).

    Native threads are not counted: the CUDA driver and Triton's compiler start their own on first
    use, and a candidate can only start native threads through ctypes, which the static rules
    forbid."""
    children = 0
    try:
        with open(f"/proc/{os.getpid()}/task/{os.getpid()}/children", encoding="ascii") as f:
            children = len(f.read().split())
    except OSError:
        pass
    return threading.active_count() + children


@contextmanager
def recording(counter: LaunchCounter):
    """Record aten ops and kernel launches for the duration of the block."""
    recorder = OpRecorder()
    counter.recorder = recorder
    counter.reset()
    try:
        with recorder:
            yield recorder
    finally:
        counter.recorder = None
