"""What a kernel launch may carry into a kernel, checked by the worker's launch hook
(``guards.LaunchCounter``) before every launch.

Under the CPU interpreter a kernel is Python: any object it is handed that runs code or holds
containers could carry what the kernel reads back to the host. So a launch value is data
(``launch_value``), down to what Triton's own objects hold, a kernel's parameter defaults are
checked like its arguments (``kernel_defaults``), and an interpreted launch's grid callable is
called by the worker before the launch, as Triton's compiled launcher calls it (``raw_grid``).
"""

from __future__ import annotations

import torch

_LAUNCH_SCALARS = (int, float, bool, str, type(None), torch.dtype)
MAX_LAUNCH_DEPTH = 8


def launch_value(value, depth: int = 0) -> bool:
    """Whether a kernel may be launched with ``value``: a tensor, a number, a string, ``None``, a
    dtype, a tuple of those, a plain jit kernel passed as an argument, or another object of
    Triton's (``constexpr``, ``tl.tuple``, dtypes, a tensor descriptor, a Gluon layout) whose own
    state holds nothing but such values and lists of them. Not a list, a dict, a function or an
    object of the candidate's, at the top level or inside an object of Triton's: under the CPU
    interpreter a kernel is Python, and such an argument would carry what it reads to the host
    (``SINK.append(str(block))``; a kernel that calls a ``tl.constexpr(f)`` parameter calls ``f``)."""
    if isinstance(value, torch.Tensor) or type(value) in _LAUNCH_SCALARS:
        return True
    if depth >= MAX_LAUNCH_DEPTH:
        return False
    if type(value) in (tuple, torch.Size):
        return all(launch_value(v, depth + 1) for v in value)
    module = type(value).__module__ or ""
    if module != "triton" and not module.startswith("triton."):
        return False
    return _triton_value(value, depth)


def _triton_value(value, depth: int) -> bool:
    """``launch_value`` for an object of Triton's: a plain jit kernel whose jit options (an
    interpreted kernel's ``kwargs``, where ``repr`` may be a function) hold data; not an autotuned or
    heuristics kernel, which no kernel calls and whose ``values`` are the candidate's functions;
    any other object by its instance state."""
    from triton.runtime.jit import JITFunction, KernelInterface

    if isinstance(value, KernelInterface):
        options = getattr(value, "kwargs", {})
        plain = isinstance(value, JITFunction) or type(value).__name__ == "InterpretedFunction"
        return plain and type(options) is dict and all(_field_value(v, depth + 1) for v in options.values())
    state = getattr(value, "__dict__", None)
    return type(state) is dict and all(_field_value(v, depth + 1) for v in state.values())


def _field_value(value, depth: int) -> bool:
    """A field of an object of Triton's: a launch value, a device, or a list of field values
    (layouts and descriptors hold lists of integers; ``triton.reinterpret``'s wrapper a device)."""
    if type(value) is torch.device:
        return True
    if type(value) is list:
        return depth < MAX_LAUNCH_DEPTH and all(_field_value(v, depth + 1) for v in value)
    return launch_value(value, depth)


def kernel_defaults(fn_self) -> list:
    """The default values of a launched kernel's parameters (``fn_self.fn``'s): the interpreter
    passes them to the kernel like arguments, so they are checked like arguments."""
    fn = getattr(fn_self, "fn", None)
    defaults = getattr(fn, "__defaults__", None) or ()
    kwdefaults = getattr(fn, "__kwdefaults__", None) or {}
    return [*defaults, *kwdefaults.values()]


def raw_grid(fn_self, grid, args: tuple, kwargs: dict):
    """The grid of an interpreted launch, computed as Triton's compiled launcher computes it: the
    callable called once, before the launch, with the launch's own arguments by name (defaults
    filled in), its result a tuple of integers. Triton's CPU interpreter would call it inside the
    launch, with the pointers it made of the tensors and while it has patched ``tl``: there the
    grid's host code could ``tl.load`` the inputs through those pointers and compute on the host
    (and so could a callable the grid returned, which the interpreter would call in turn)."""
    import inspect

    signature = inspect.signature(fn_self.fn)
    bound = signature.bind(*args, **{k: v for k, v in kwargs.items() if k in signature.parameters})
    bound.apply_defaults()
    return tuple(int(g) for g in grid(dict(bound.arguments)))


__all__ = ["MAX_LAUNCH_DEPTH", "kernel_defaults", "launch_value", "raw_grid"]
