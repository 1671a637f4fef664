"""CPU launch plans' kernels as source: what an entry is, and the trusted parent's check of it.

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
(``static_checks.check_kernel_module``, in ``rules_problem``): what a kernel body may do is what
Triton's compiler accepts, and nothing it reads may reach the host. A plan that breaks a rule is a
compile error, not a violation: such a kernel would not compile for a GPU. The replay binds
nothing but what passed here.
"""

from __future__ import annotations

import ast
import math
import re

from hawkeye_env.judge.launch_plan import KERNEL_NAME, MAX_ARGS

MAX_SOURCE_CHARS = 64 << 10  # one kernel's text; the largest expert kernel is under 8 KiB
MAX_SOURCES_CHARS = 1 << 20  # all of a plan's kernel texts
MAX_GLOBALS = 256
MAX_LITERAL_CHARS = 64
KERNEL_MODULES = ("triton.language", "triton.language.math", "triton.language.extra.libdevice",
                  "triton.language.extra.cuda.libdevice", "triton", "math")
UNIT_MODULE = re.compile(r"^units(\.[A-Za-z][A-Za-z0-9_]{0,63}){1,4}$")
IDENTIFIER = re.compile(r"^(?!__)[A-Za-z_][A-Za-z0-9_]{0,63}$")  # no dunder: `__builtins__` would rebind the builtins
_TRITON = "hawkeye_triton"


def is_source_kernel(k) -> bool:
    """Whether kernel entry ``k`` is of a CPU plan (source or unit) rather than a GPU binary."""
    return isinstance(k, dict) and ("source" in k or "unit" in k)


def _literal(v, depth: int = 0) -> bool:
    if v is None or isinstance(v, (bool, int, float)):
        return True
    if isinstance(v, str):
        return len(v) <= MAX_LITERAL_CHARS
    if isinstance(v, (tuple, list)) and depth < 2:
        return len(v) <= 16 and all(_literal(x, depth + 1) for x in v)
    return False


def _literal_text(v) -> str:
    """Python text for literal ``v`` made of literals only (non-finite floats as overflowing
    literals, so the static rules still see constants)."""
    if isinstance(v, float) and not math.isfinite(v):
        return "(1e400 - 1e400)" if math.isnan(v) else ("1e400" if v > 0 else "-1e400")
    if isinstance(v, (tuple, list)):
        return "(" + "".join(_literal_text(x) + ", " for x in v) + ")"
    return repr(v)


def binding_problem(name, b, kernels: int) -> str | None:
    """Why ``b`` is not a well-formed binding of free name ``name`` in a plan of ``kernels``
    entries (None when it is)."""
    if not isinstance(name, str) or not IDENTIFIER.match(name) or name == _TRITON:
        return "a free name is not an identifier"
    if not isinstance(b, dict) or not isinstance(b.get("kind"), str):
        return f"the binding of {name} is not a tagged dict"
    kind, fields = b["kind"], set(b)
    if kind == "jit":
        ok = fields == {"kind", "index"} and isinstance(b["index"], int) and not isinstance(b["index"], bool) \
            and 0 <= b["index"] < kernels
    elif kind == "unit":
        ok = fields == {"kind", "module", "name"} and isinstance(b["module"], str) and bool(UNIT_MODULE.match(
            b["module"])) and isinstance(b["name"], str) and bool(IDENTIFIER.match(b["name"]))
    elif kind in ("value", "constexpr"):
        ok = fields == {"kind", "value"} and _literal(b["value"])
    elif kind == "module":
        ok = fields == {"kind", "name"} and (b["name"] in KERNEL_MODULES or b["name"] == "triton.language.core")
    elif kind == "attr":
        ok = fields in ({"kind", "module", "name"}, {"kind", "module", "name", "constexpr"}) \
            and b["module"] in KERNEL_MODULES and isinstance(b["name"], str) and bool(IDENTIFIER.match(b["name"])) \
            and not b["name"].startswith("_") and b.get("constexpr", True) is True
    else:
        return f"the binding of {name} has unknown kind {kind[:20]!r}"
    return None if ok else f"the binding of {name} ({kind}) is malformed"


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
        return f"{name} = {_TRITON}.language.constexpr({_literal_text(b['value'])})"
    params = _params_text(entries[b["index"]])
    return f"@{_TRITON}.jit\ndef {name}({params}):\n    pass"


def _params_text(entry: dict) -> str:
    if "source" not in entry:
        return "*args"
    fn = ast.parse(entry["source"]).body[0]
    return ", ".join(a.arg for a in fn.args.args)


def kernel_module_text(entry: dict, entries: list) -> str:
    """The judge's module for source entry ``entry`` (module docstring): the text the static
    kernel rules read."""
    lines = [f"import triton as {_TRITON}"]
    # imports and constants before the helpers' stubs: a decorator is a call, and the static rules
    # take a binding made after a module-level call as not surely bound
    ordered = sorted(entry["globals"].items(), key=lambda nb: nb[1]["kind"] == "jit")
    lines += [_binding_text(n, b, entries) for n, b in ordered]
    lines += [f"@{_TRITON}.jit", entry["source"]]
    return "\n".join(lines) + "\n"


def _source_problem(i: int, k: dict) -> str | None:
    """Why source entry ``k`` does not parse to exactly one plain def named as the entry."""
    if not isinstance(k["source"], str) or len(k["source"]) > MAX_SOURCE_CHARS:
        return f"kernel {i}: the source is not text within {MAX_SOURCE_CHARS} characters"
    from hawkeye_env.judge.static_checks import parse_source

    try:
        tree = parse_source(k["source"])
    except (SyntaxError, ValueError):
        return f"kernel {i}: the source does not parse"
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        return f"kernel {i}: the source is not one def"
    fn = tree.body[0]
    if fn.name != k["name"] or fn.decorator_list:
        return f"kernel {i}: the def is not a plain def named {k['name']}"
    a = fn.args
    if a.vararg or a.kwarg or a.posonlyargs or a.kwonlyargs or len(a.args) > MAX_ARGS:
        return f"kernel {i}: parameters other than at most {MAX_ARGS} plain ones"
    return None


def entry_problem(i: int, k, kernels: int) -> str | None:
    """Why kernel entry ``k`` (index ``i`` of ``kernels`` entries) is malformed, or None; the
    kernel rules are checked by ``sources_problem`` once every entry is well formed."""
    if not isinstance(k, dict) or not isinstance(k.get("name"), str) or not KERNEL_NAME.match(k["name"]):
        return f"kernel {i} is not an entry with a kernel name"
    if set(k) == {"name", "unit"}:
        u = k["unit"]
        ok = isinstance(u, dict) and set(u) == {"module", "name"} and isinstance(u["module"], str) \
            and bool(UNIT_MODULE.match(u["module"])) and u["name"] == k["name"]
        return None if ok else f"kernel {i}: a malformed unit reference"
    if set(k) != {"name", "source", "globals"}:
        return f"kernel {i} is neither a source entry nor a unit reference"
    problem = _source_problem(i, k)
    if problem:
        return problem
    g = k["globals"]
    if not isinstance(g, dict) or len(g) > MAX_GLOBALS:
        return f"kernel {i}: the globals are not a dict of at most {MAX_GLOBALS} bindings"
    for name, b in g.items():
        problem = binding_problem(name, b, kernels)
        if problem:
            return f"kernel {i}: {problem}"
    return None


def sources_problem(kernels) -> str | None:
    """Why a CPU plan's ``kernels`` are malformed (None when they are well formed): every entry
    well formed and the texts bounded. What the kernels' bodies do is ``rules_problem``'s."""
    from hawkeye_env.judge.launch_plan import MAX_KERNELS

    if not isinstance(kernels, list) or not kernels or len(kernels) > MAX_KERNELS:
        return f"the kernels are not a list of 1 to {MAX_KERNELS} entries"
    for i, k in enumerate(kernels):
        problem = entry_problem(i, k, len(kernels))
        if problem:
            return problem
    if sum(len(k.get("source", "")) for k in kernels) > MAX_SOURCES_CHARS:
        return f"the kernel sources hold more than {MAX_SOURCES_CHARS} characters in all"
    return None


def rules_problem(kernels: list[dict]) -> str | None:
    """Why a well-formed CPU plan's kernels may not run in the replay (None when they may): the
    first static kernel rule a source breaks in the judge's module for it. Such a kernel is not
    one Triton compiles for a GPU (a ``raise``, a host call, a store to a Python object)."""
    from hawkeye_env.judge.static_checks import check_kernel_module

    for k in kernels:
        if "source" in k:
            findings = check_kernel_module(kernel_module_text(k, kernels))
            if findings:
                message = findings[0].message
                return message if message.startswith(f"kernel {k['name']}") else f"kernel {k['name']}: {message}"
    return None


def param_count(k: dict) -> int | None:
    """The number of parameters of source entry ``k``; None for a unit's kernel (the replay binds
    its arguments and fails the launch if they do not fit)."""
    if "source" not in k:
        return None
    return len(ast.parse(k["source"]).body[0].args.args)


__all__ = ["KERNEL_MODULES", "entry_problem", "is_source_kernel", "kernel_module_text", "param_count",
           "rules_problem", "sources_problem"]
