"""CPU launch plans' kernels as source: what an entry is, and the module text the parent checks.

On CPU a plan's kernels (``interpreter_recorder.py`` writes them in the candidate's worker) are
``{"name", "source", "globals"}`` (a ``def`` without decorators and what each of its free names is
bound to) or ``{"name", "unit": {"module", "name"}}`` (a unit's kernel, imported from the project
by the replay). A binding is one of

* ``{"kind": "jit", "index": i}``: the plan's kernel entry ``i`` (a helper);
* ``{"kind": "unit", "module": "units....", "name": n}``: a unit's jit function;
* ``{"kind": "value", "value": v}`` or ``{"kind": "constexpr", "value": v}``: a literal;
* ``{"kind": "module", "name": m}``: ``math`` or a Triton module;
* ``{"kind": "attr", "module": m, "name": n}`` (optionally ``"constexpr": true``): an object
  that module ``m`` (``KERNEL_MODULES``) holds under ``n``.

The replay (``source_rebuild.py``) runs these functions under Triton's interpreter, where a
kernel body is Python. So the parent holds each source to the same rules as a kernel in a
candidate's file: it writes a module of the judge's own (the bindings as imports and constants,
helpers as stub kernels, the def under ``@triton.jit``) and runs the static kernel rules on it
(``parent/validate/source_check.py``): what a kernel body may do is what
Triton's compiler accepts, and nothing it reads may reach the host. A plan that breaks a rule is a
compile error, not a violation: such a kernel would not compile for a GPU. The replay binds
nothing but what passed here.
"""

from __future__ import annotations

import ast
import math
import re

MAX_SOURCE_CHARS = 64 << 10  # one kernel's text; the largest expert kernel is under 8 KiB
MAX_SOURCES_CHARS = 1 << 20  # all of a plan's kernel texts
MAX_GLOBALS = 256
MAX_LITERAL_CHARS = 64
KERNEL_MODULES = ("triton.language", "triton.language.math", "triton.language.extra.libdevice",
                  "triton.language.extra.cuda.libdevice", "triton", "math")
UNIT_MODULE = re.compile(r"^units(\.[A-Za-z][A-Za-z0-9_]{0,63}){1,4}$")
IDENTIFIER = re.compile(r"^(?!__)[A-Za-z_][A-Za-z0-9_]{0,63}$")  # no dunder: `__builtins__` would rebind the builtins
TRITON_ALIAS = "hawkeye_triton"
# the Python builtins a kernel body may call, and all the replay binds besides a plan's checked names
KERNEL_BUILTINS = frozenset({"range", "float", "int", "bool", "min", "max", "len", "abs", "isinstance", "zip",
                             "enumerate", "tuple"})
# A CPU launch step may carry ``"options"``: the launch options the forward passed (an autotuner's
# chosen configuration's included), which the interpreter ignores and the sm_90 cross-compile of a
# profile reads (``sandboxed/replay/cross_compile.py``). Each is an integer in 1..MAX_LAUNCH_OPTION
# (``maxnreg`` reaches 255 registers).
LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")
MAX_LAUNCH_OPTION = 256


def is_source_kernel(k) -> bool:
    """Whether kernel entry ``k`` is of a CPU plan (source or unit) rather than a GPU binary."""
    return isinstance(k, dict) and ("source" in k or "unit" in k)


def is_literal(v, depth: int = 0) -> bool:
    if v is None or isinstance(v, (bool, int, float)):
        return True
    if isinstance(v, str):
        return len(v) <= MAX_LITERAL_CHARS
    if isinstance(v, (tuple, list)) and depth < 2:
        return len(v) <= 16 and all(is_literal(x, depth + 1) for x in v)
    return False


def _literal_text(v) -> str:
    """Python text for literal ``v`` made of literals only (non-finite floats as overflowing
    literals, so the static rules still see constants)."""
    if isinstance(v, float) and not math.isfinite(v):
        return "(1e400 - 1e400)" if math.isnan(v) else ("1e400" if v > 0 else "-1e400")
    if isinstance(v, (tuple, list)):
        return "(" + "".join(_literal_text(x) + ", " for x in v) + ")"
    return repr(v)


def _binding_text(name: str, b: dict, entries: list) -> str:
    kind = b["kind"]
    if kind == "module":
        return f"import {b['name']} as {name}"
    if kind == "attr":
        return f"from {b['module']} import {b['name']} as {name}"
    if kind == "unit":
        return f"from {b['module']} import {b['name']} as {name}"
    if kind == "value":
        return f"{name} = {_literal_text(b['value'])}"
    if kind == "constexpr":
        return f"{name} = {TRITON_ALIAS}.language.constexpr({_literal_text(b['value'])})"
    params = _params_text(entries[b["index"]])
    return f"@{TRITON_ALIAS}.jit\ndef {name}({params}):\n    pass"


def _params_text(entry: dict) -> str:
    if "source" not in entry:
        return "*args"
    fn = ast.parse(entry["source"]).body[0]
    return ", ".join(a.arg for a in fn.args.args)


def kernel_module_text(entry: dict, entries: list) -> str:
    """The judge's module for source entry ``entry`` (module docstring): the text the static
    kernel rules read."""
    lines = [f"import triton as {TRITON_ALIAS}"]
    # imports and constants before the helpers' stubs: a decorator is a call, and the static rules
    # take a binding made after a module-level call as not surely bound
    ordered = sorted(entry["globals"].items(), key=lambda nb: nb[1]["kind"] == "jit")
    lines += [_binding_text(n, b, entries) for n, b in ordered]
    lines += [f"@{TRITON_ALIAS}.jit", entry["source"]]
    return "\n".join(lines) + "\n"


def launch_options_problem(options) -> str | None:
    """Why a CPU launch step's ``"options"`` are malformed (``LAUNCH_OPTIONS``), or None."""
    if not isinstance(options, dict) or not set(options) <= set(LAUNCH_OPTIONS):
        return "a launch's options are not a dict of known launch options"
    if not all(type(v) is int and 1 <= v <= MAX_LAUNCH_OPTION for v in options.values()):
        return f"a launch option is not an integer in 1..{MAX_LAUNCH_OPTION}"
    return None


__all__ = ["KERNEL_BUILTINS", "KERNEL_MODULES", "LAUNCH_OPTIONS", "MAX_LAUNCH_OPTION", "is_source_kernel",
           "kernel_module_text", "launch_options_problem"]
