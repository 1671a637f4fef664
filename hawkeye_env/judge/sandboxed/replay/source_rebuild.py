"""Rebuilding a CPU plan's kernels from their checked source, in the trusted replay.

The parent checked every entry (``parent/validate/source_check.py``); this module turns them back
into Triton kernels the interpreter runs, without importing anything of the candidate's: each
source is written to a file of the replay's scratch folder (Triton's interpreter reads a kernel's
lines back to rewrite it), compiled and executed in a namespace of its own that holds only its
checked bindings, Triton's language module (the interpreter looks for it there) and the builtins
a kernel may call (``source_kernels.KERNEL_BUILTINS``); a unit's kernel is imported from
the project. ``build_launches`` returns one ``launch(grid, args)`` per entry.
"""

from __future__ import annotations

import builtins
import importlib
import os


class RebuildError(Exception):
    """An entry that passed the parent's check could not be rebuilt (a missing unit, a name the
    interpreter cannot bind): the candidate's plan does not replay."""


def _value(b: dict):
    import triton.language as tl

    kind = b["kind"]
    if kind == "value":
        v = b["value"]
        return tuple(v) if isinstance(v, list) else v
    if kind == "constexpr":
        v = b["value"]
        return tl.constexpr(tuple(v) if isinstance(v, list) else v)
    if kind == "module":
        return importlib.import_module(b["name"])
    if kind == "unit":
        return _unit_kernel(b)
    if kind == "attr":
        try:
            obj = getattr(importlib.import_module(b["module"]), b["name"])
        except (ImportError, AttributeError) as exc:
            raise RebuildError(f"{b['module']}.{b['name']} does not exist here") from exc
        return tl.constexpr(obj) if b.get("constexpr") else obj
    return None  # "jit": bound once every entry is built


def _unit_kernel(u: dict):
    """The jit kernel unit module ``u["module"]`` defines as ``u["name"]``: a unit's plain host
    function is never bound into a kernel's namespace. Interpreted under the replay's interpreter,
    a compilable ``JITFunction`` in the cross-compile (``cross_compile.py``)."""
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    kernel_types = (InterpretedFunction, JITFunction)
    try:
        obj = getattr(importlib.import_module(u["module"]), u["name"])
    except (ImportError, AttributeError) as exc:
        raise RebuildError(f"{u['module']}.{u['name']} does not exist here") from exc
    for _ in range(4):  # an autotuned or heuristics kernel: the jit function it wraps
        if isinstance(obj, kernel_types):
            break
        obj = getattr(obj, "fn", None)
    if not isinstance(obj, kernel_types):
        raise RebuildError(f"{u['module']}.{u['name']} is not a Triton kernel")
    return obj


def build_kernels(entries: list[dict], folder: str) -> list:
    """The jit objects of ``entries`` (checked source entries and unit references), in order."""
    import triton
    import triton.language as tl

    # Imported here, not at the top: the static rules import Triton, which the replay may import
    # only after it set the interpreter's flag (``worker_process.setup_process``).
    from hawkeye_env.judge.shared.source_kernels import KERNEL_BUILTINS

    safe = {n: getattr(builtins, n) for n in KERNEL_BUILTINS}  # what a kernel body may call
    built, spaces = [], []
    for i, e in enumerate(entries):
        if "unit" in e:
            built.append(_unit_kernel(e["unit"]))
            spaces.append(None)
            continue
        path = os.path.join(folder, f"kernel_{i}_{e['name']}.py")
        with open(path, "w", encoding="utf-8") as f:
            f.write(e["source"] + "\n")
        space = {"__builtins__": safe, "__name__": f"hawkeye_replay_kernel_{i}", "hawkeye_tl": tl}
        space.update({n: _value(b) for n, b in e["globals"].items() if b["kind"] != "jit"})
        exec(compile(e["source"] + "\n", path, "exec"), space)  # noqa: S102 - checked kernel text, see module doc
        built.append(triton.jit(space[e["name"]]))
        spaces.append(space)
    for e, space in zip(entries, spaces):
        if space is not None:
            space.update({n: built[b["index"]] for n, b in e["globals"].items() if b["kind"] == "jit"})
    return built


def build_launches(entries: list[dict], folder: str) -> list:
    """One ``launch(grid, args)`` per entry: the kernel run by the interpreter on ``grid`` with
    ``args``, every parameter in order."""
    return [_launcher(k) for k in build_kernels(entries, folder)]


def _launcher(kernel):
    def launch(grid, args):
        kernel[tuple(grid)](*args)

    return launch


__all__ = ["RebuildError", "build_kernels", "build_launches"]
