"""Recording a CPU forward's kernel launches as source the trusted replay rebuilds (candidate's worker).

On CPU Triton's interpreter runs a kernel as a Python function, so a launch plan cannot carry a
compiled binary as on the GPU (``plan_recorder.py``). It carries the kernel as text instead: for
each launched ``@triton.jit`` function, its ``def`` without decorators, and what each free name of
that text is bound to (``source_kernels.py`` says what an entry is, checks it in the parent and
rebuilds it in the replay). A free name may be bound to

* another jit function (a helper the kernel calls): recorded the same way, by index;
* a literal (``int``, ``float``, ``bool``, ``None``, a short ``str``, a tuple of them) or a
  ``tl.constexpr`` of one: recorded as its value;
* a module of Triton's or ``math`` (``tl``, ``libdevice``): recorded by name;
* an object such a module holds (``_exp = tl.exp``, ``DTYPE = tl.float32``): recorded as
  module and attribute name, found by identity;
* a jit function of a unit (``units.*``): recorded as module and name, so the replay imports the
  project's own code.

Anything else (a candidate's own module, a list, a class) makes the forward not replayable on CPU,
with the name in the message. Nothing here is a defence: the candidate controls this process and
may write any entry it likes; the parent checks every entry and the replay runs only what passed.

``install_interpreter_hooks`` wraps ``InterpretedFunction.run`` (every top-level launch, whatever
called it: ``kernel[grid](...)``, an autotuner, heuristics) and the autotuner's benchmarking, during
which nothing is recorded. A recorded launch is then run on an empty grid: the launch is counted
and its arguments checked as before, but no program runs, since the trusted replay computes every
output a verdict reads (a recording that ran the kernels cost as much as a trial). While the
interpreter handles a launch the recorder is suspended: its own copies of the arguments are not
the forward's ops.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import textwrap

import torch

from hawkeye_env.judge.sandboxed.candidate.plan_recorder import NotReplayable, active
from hawkeye_env.judge.shared.launch_plan import MAX_KERNELS
from hawkeye_env.judge.shared.source_kernels import KERNEL_MODULES, LAUNCH_OPTIONS, MAX_LAUNCH_OPTION, MAX_LITERAL_CHARS


def _jit_function(obj):
    """The Python function behind a jit kernel object (interpreted or compiled), or None."""
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    if isinstance(obj, InterpretedFunction):
        return obj.fn
    if isinstance(obj, JITFunction):
        return obj.fn
    return None


def function_source(fn) -> str:
    """The ``def`` of ``fn`` without its decorators, as canonical text (``ast.unparse``)."""
    try:
        text = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError) as exc:
        raise NotReplayable(f"the source of kernel {getattr(fn, '__name__', '?')} is not available") from exc
    tree = ast.parse(text)
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == fn.__name__]
    if len(defs) != 1:
        raise NotReplayable(f"kernel {fn.__name__}: its source is not one def")
    defs[0].decorator_list = []
    return ast.unparse(defs[0])


def free_names(source: str) -> list[str]:
    """Names the def in ``source`` reads that it does not bind itself (parameters, assignments,
    loop and comprehension targets), in first-read order; builtins are left to the replay."""
    fn = ast.parse(source).body[0]
    bound = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs, fn.args.vararg,
                             fn.args.kwarg) if a is not None}
    bound |= {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    names: list[str] = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in bound \
                and node.id not in names:
            names.append(node.id)
    return names


def _literal(v, depth: int = 0) -> bool:
    if v is None or isinstance(v, (bool, int, float)):
        return True
    if isinstance(v, str):
        return len(v) <= MAX_LITERAL_CHARS
    if isinstance(v, tuple) and depth < 2:
        return len(v) <= 16 and all(_literal(x, depth + 1) for x in v)
    return False


def _module_attribute(obj) -> dict | None:
    """``{"module", "name"}`` of a module in ``KERNEL_MODULES`` whose attribute ``obj`` is, or None."""
    for name in KERNEL_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        for attr, value in vars(module).items():
            if value is obj and not attr.startswith("_"):
                return {"kind": "attr", "module": name, "name": attr}
    return None


class SourceTable:
    """The entries of one recording, each jit function once (``kernels[i]``): ``{"name", "source",
    "globals"}`` for a function of the candidate's, ``{"name", "unit": {"module", "name"}}`` for a
    unit's kernel, which the replay imports from the project."""

    def __init__(self, kernels: list[dict]):
        self.kernels = kernels
        self.index: dict[int, int] = {}
        self.alive: list = []

    def entry(self, obj) -> int:
        """The index of jit object ``obj``'s entry, adding it (and its helpers) first."""
        if id(obj) in self.index:
            return self.index[id(obj)]
        if len(self.kernels) >= MAX_KERNELS:
            raise NotReplayable(f"the forward uses more than {MAX_KERNELS} kernels and helpers")
        fn = _jit_function(obj)
        k = len(self.kernels)
        self.index[id(obj)] = k
        self.alive.append(obj)
        unit = unit_binding(obj, fn)
        if unit is not None:
            self.kernels.append({"name": fn.__name__, "unit": {"module": unit["module"], "name": unit["name"]}})
            return k
        source = function_source(fn)
        entry = {"name": fn.__name__, "source": source, "globals": {}}
        self.kernels.append(entry)
        for name in free_names(source):
            binding = self._binding(fn, name)
            if binding is not None:
                entry["globals"][name] = binding
        return k

    def _binding(self, fn, name: str) -> dict | None:
        scope = fn.__globals__
        if name not in scope:
            if hasattr(builtins, name):
                return None
            raise NotReplayable(f"kernel {fn.__name__} reads {name}, which is not bound")
        obj = scope[name]
        inner = _jit_function(obj)
        if inner is not None and (getattr(inner, "__module__", "") or "").startswith("triton."):
            found = _module_attribute(obj)  # Triton's own jit functions (``tl.sigmoid``): by name
            if found is not None:
                return found
        if inner is not None:
            return unit_binding(obj, inner) or {"kind": "jit", "index": self.entry(obj)}
        return value_binding(obj, f"kernel {fn.__name__} reads {name}")


def unit_binding(obj, fn) -> dict | None:
    """``{"kind": "unit", "module", "name"}`` when jit object ``obj`` is a kernel a unit module
    defines under its own name, else None."""
    module = getattr(fn, "__module__", "") or ""
    if not module.startswith("units."):
        return None
    try:
        found = getattr(importlib.import_module(module), fn.__name__, None)
    except ImportError:
        return None
    for _ in range(4):  # an autotuned or heuristics kernel wraps the jit object
        if found is obj or found is None:
            break
        found = getattr(found, "fn", None)
    return {"kind": "unit", "module": module, "name": fn.__name__} if found is obj else None


def value_binding(obj, what: str) -> dict:
    """How a kernel's free name bound to ``obj`` (not a jit function) travels to the replay."""
    import triton.language as tl

    if inspect.ismodule(obj):
        if obj.__name__ == "math" or obj.__name__.startswith("triton"):
            return {"kind": "module", "name": obj.__name__}
        raise NotReplayable(f"{what}, the module {obj.__name__}: a kernel may name Triton's modules and math")
    if isinstance(obj, tl.constexpr):
        if _literal(obj.value):
            return {"kind": "constexpr", "value": obj.value}
        found = _module_attribute(obj.value)
        if found is not None:
            return {**found, "constexpr": True}
        raise NotReplayable(f"{what}, a constexpr of a {type(obj.value).__name__}")
    if _literal(obj):
        return {"kind": "value", "value": obj}
    found = _module_attribute(obj)
    if found is not None:
        return found
    raise NotReplayable(f"{what}, a {type(obj).__name__}: a kernel's module-level names may be literals, "
                        "constexprs, jit functions and Triton's modules or their functions")


def launch_value(rec, v, depth: int = 0):
    """A launch argument as plan data: tensors as references (CPU tensors only), literals as
    themselves, Triton dtypes as ``{"tl": name}``, tuples tagged."""
    import triton.language as tl

    if isinstance(v, torch.Tensor):
        if v.device.type != "cpu":
            raise NotReplayable(f"a launch argument on {v.device.type}")
        return rec.ref(v)
    if isinstance(v, tl.constexpr):
        v = v.value
    if v is None or isinstance(v, (bool, int, float)) or isinstance(v, str) and len(v) <= MAX_LITERAL_CHARS:
        return v
    if isinstance(v, tuple) and depth < 2:
        return {"tuple": [launch_value(rec, x, depth + 1) for x in v]}
    descriptor = _descriptor(rec, v)
    if descriptor is not None:
        return descriptor
    if isinstance(v, tl.dtype):
        found = _module_attribute(v)
        if found is not None and found["module"] == "triton.language":
            return {"tl": found["name"]}
    raise NotReplayable(f"a launch argument of type {type(v).__name__}")


def _descriptor(rec, v) -> dict | None:
    """A host tensor descriptor (``triton.tools.tensor_descriptor.TensorDescriptor``) as the GPU
    plan writes one (``{"desc": ...}``), or None for any other value."""
    try:
        from triton.tools.tensor_descriptor import TensorDescriptor
    except ImportError:
        return None
    if not isinstance(v, TensorDescriptor) or not isinstance(v.base, torch.Tensor):
        return None
    return {"desc": {"base": rec.ref(v.base), "shape": [int(s) for s in v.shape],
                     "strides": [int(s) for s in v.strides], "block_shape": [int(s) for s in v.block_shape],
                     "padding": getattr(v, "padding", "zero")}}


def record_launch(rec, interpreted, args: tuple, kwargs: dict, grid) -> None:
    """Append one launch of ``interpreted`` (an ``InterpretedFunction``) to recorder ``rec``:
    its entry, the grid resolved on the bound arguments, every parameter's value in order, and the
    launch options it was given (``source_kernels.LAUNCH_OPTIONS``)."""
    if rec.suspended or rec.refusal:
        return
    try:
        fn = interpreted.fn
        table = getattr(rec, "source_table", None)
        if table is None:
            table = rec.source_table = SourceTable(rec.kernels)
        k = table.entry(interpreted)
        names = list(inspect.signature(fn).parameters)
        bound = inspect.signature(fn).bind(*args, **{n: x for n, x in kwargs.items() if n in names})
        bound.apply_defaults()
        resolved = grid(dict(bound.arguments)) if callable(grid) else grid
        resolved = tuple(int(g) for g in resolved)
        if not 1 <= len(resolved) <= 3:
            raise NotReplayable(f"kernel {fn.__name__}: a grid of {len(resolved)} dimensions")
        step = {"launch": k, "grid": list(resolved) + [1] * (3 - len(resolved)),
                "args": [launch_value(rec, bound.arguments[n]) for n in names]}
        options = {n: kwargs[n] for n in LAUNCH_OPTIONS
                   if type(kwargs.get(n)) is int and 1 <= kwargs[n] <= MAX_LAUNCH_OPTION}
        if options:  # read by the sm_90 cross-compile of a profile, ignored by the interpreter
            step["options"] = options
        rec.steps.append(step)
    except NotReplayable as exc:
        rec.refusal = str(exc)
    except Exception as exc:  # noqa: BLE001 - the candidate's grid or arguments: its forward is refused
        rec.refusal = f"a launch could not be recorded: {type(exc).__name__}: {str(exc)[:200]}"


_installed = False


def install_interpreter_hooks() -> None:
    """Wrap ``InterpretedFunction.run`` and ``Autotuner._bench`` (module docstring). Idempotent."""
    global _installed
    if _installed:
        return
    from triton.runtime.autotuner import Autotuner
    from triton.runtime.interpreter import InterpretedFunction

    run, bench = InterpretedFunction.run, Autotuner._bench

    def _run(self, *args, grid, warmup, **kwargs):
        rec = active()
        if rec is None or warmup:
            return run(self, *args, grid=grid, warmup=warmup, **kwargs)
        record_launch(rec, self, args, kwargs, grid)
        rec.suspended += 1
        try:  # an empty grid: the plan needs the launch, not its result (the replay computes every
            # judged output), and the interpreter's run of the kernel is most of a recording's time
            return run(self, *args, grid=(0, 0, 0), warmup=warmup, **kwargs)
        finally:
            rec.suspended -= 1

    def _bench(self, *args, **kwargs):
        rec = active()
        if rec is not None:
            rec.suspended += 1
        try:
            return bench(self, *args, **kwargs)
        finally:
            if rec is not None:
                rec.suspended -= 1

    InterpretedFunction.run, Autotuner._bench = _run, _bench
    _installed = True


__all__ = ["SourceTable", "free_names", "function_source", "install_interpreter_hooks",
           "launch_value", "record_launch", "unit_binding", "value_binding"]
