"""Bounds on the memory a kernel reaches under Triton's CPU interpreter.

On the CPU a pointer is a raw host address and the interpreter's loads, stores and atomics
dereference whatever address a kernel computes: a kernel that casts a pointer to an integer and
offsets it reads and writes the whole worker process, so it could rewrite the module globals the
static rules reasoned about (a global bound to ``print`` rebound to the builtin ``exec``) or the
judge's guards. ``install_memory_bounds`` makes every masked-in address of a load, store or atomic
fall inside the storage of one of the launch's tensor arguments (descriptors' bases included;
only real tensors, read through ``torch.Tensor``'s own methods, name a range), else the launch
raises ``KernelMemoryError`` and the candidate's verdict is a runtime error. It
runs in the candidate's worker, before any candidate code: what it guards is what a kernel could
only reach through the access it refuses.
"""

from __future__ import annotations

import numpy as np

_MARK = "_hawkeye_bounds"
# (sorted starts, ends) of the latest launch's argument storages, in bytes (set as each launch
# starts, kept after it); None before the first launch.
_ranges: tuple[np.ndarray, np.ndarray] | None = None


class KernelMemoryError(RuntimeError):
    """A kernel addressed memory outside its tensor arguments."""


def _storages(value, found: dict[int, int]) -> None:
    """``found[start] = end`` for every tensor storage ``value`` holds (tuples, Triton's dtype
    wrappers, descriptors of exactly Triton's type). Only real tensors count, read through
    ``torch.Tensor``'s own method: an object that merely answers ``untyped_storage`` (a module
    dict's entry does) would name any range."""
    import torch
    from triton.runtime.jit import TensorWrapper
    from triton.tools.tensor_descriptor import TensorDescriptor

    if isinstance(value, (tuple, list)):
        for item in value:
            _storages(item, found)
    elif type(value) in (TensorDescriptor, TensorWrapper):
        _storages(value.base, found)
    elif isinstance(value, torch.Tensor):
        storage = torch.Tensor.untyped_storage(value)
        start = torch.UntypedStorage.data_ptr(storage)
        found[start] = start + torch.UntypedStorage.nbytes(storage)


def _check(addresses: np.ndarray, mask, itemsize: int) -> None:
    if _ranges is None:
        raise KernelMemoryError("a kernel memory access before any launch")
    picked = np.asarray(addresses, dtype=np.uint64)
    if mask is not None:
        picked = picked[np.broadcast_to(np.asarray(mask, dtype=bool), picked.shape)]
    if picked.size == 0:
        return
    starts, ends = _ranges
    if starts.size == 0:
        raise KernelMemoryError("a kernel addressed memory in a launch with no tensor argument")
    slot = np.searchsorted(starts, picked, side="right").astype(np.int64) - 1
    inside = (slot >= 0) & (picked + np.uint64(itemsize) <= ends[np.maximum(slot, 0)])
    if not inside.all():
        bad = int(picked[~inside][0])
        raise KernelMemoryError(f"a kernel addressed 0x{bad:x}, outside every tensor argument of its launch")


def _bounded_args(init_args):
    def wrapper(self, args_dev, kwargs):
        global _ranges
        args_hst, kwargs_hst = init_args(self, args_dev, kwargs)
        found: dict[int, int] = {}
        _storages(list(args_hst) + list(kwargs_hst.values()), found)
        starts = np.array(sorted(found), dtype=np.uint64)
        _ranges = (starts, np.array([found[int(s)] for s in starts], dtype=np.uint64))
        return args_hst, kwargs_hst

    return wrapper


def _load(method):
    def wrapper(self, ptrs, mask, other, *args, **kwargs):
        _check(ptrs.data, mask.data, np.dtype(_np_dtype(ptrs)).itemsize)
        return method(self, ptrs, mask, other, *args, **kwargs)

    return wrapper


def _store(method):
    def wrapper(self, ptrs, value, mask, *args, **kwargs):
        _check(ptrs.data, mask.data, value.data.dtype.itemsize)
        return method(self, ptrs, value, mask, *args, **kwargs)

    return wrapper


def _cas(method):
    def wrapper(self, ptr, cmp, val, *args, **kwargs):
        _check(ptr.data, None, val.data.dtype.itemsize)
        return method(self, ptr, cmp, val, *args, **kwargs)

    return wrapper


def _rmw(method):
    def wrapper(self, op, ptr, val, mask, *args, **kwargs):
        _check(ptr.data, mask.data, val.data.dtype.itemsize)
        return method(self, op, ptr, val, mask, *args, **kwargs)

    return wrapper


def _np_dtype(ptrs):
    from triton.runtime.interpreter import _get_np_dtype

    return _get_np_dtype(ptrs.get_element_ty())


def install_memory_bounds() -> None:
    """Patch the interpreter (idempotent): launches record their arguments' storages, and loads,
    stores and atomics check every masked-in address against them."""
    from triton.runtime import interpreter

    for owner, name, wrap in ((interpreter.GridExecutor, "_init_args_hst", _bounded_args),
                              (interpreter.InterpreterBuilder, "create_masked_load", _load),
                              (interpreter.InterpreterBuilder, "create_masked_store", _store),
                              (interpreter.InterpreterBuilder, "create_atomic_cas", _cas),
                              (interpreter.InterpreterBuilder, "create_atomic_rmw", _rmw)):
        original = getattr(owner, name)
        if not getattr(original, _MARK, False):
            patched = wrap(original)
            setattr(patched, _MARK, True)
            setattr(owner, name, patched)


__all__ = ["KernelMemoryError", "install_memory_bounds"]
