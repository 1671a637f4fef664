"""The trusted parent's check of a CPU plan's kernel entries (their format is
``shared/source_kernels.py``): every entry well formed and bounded (``sources_problem``), and every
kernel body held to the static kernel rules in a module the parent writes for it
(``rules_problem``, with ``static/rules.check_kernel_module``). A plan that breaks a rule is a
compile error, not a violation: such a kernel would not compile for a GPU. The replay binds nothing
but what passed here.
"""

from __future__ import annotations

import ast

from hawkeye_env.judge.parent.static.rules import check_kernel_module, parse_source
from hawkeye_env.judge.shared.launch_plan import KERNEL_NAME, MAX_ARGS, MAX_KERNELS
from hawkeye_env.judge.shared.source_kernels import (
    IDENTIFIER,
    KERNEL_MODULES,
    MAX_GLOBALS,
    MAX_SOURCE_CHARS,
    MAX_SOURCES_CHARS,
    TRITON_ALIAS,
    UNIT_MODULE,
    is_literal,
    kernel_module_text,
)


def binding_problem(name, b, kernels: int) -> str | None:
    """Why ``b`` is not a well-formed binding of free name ``name`` in a plan of ``kernels``
    entries (None when it is)."""
    if not isinstance(name, str) or not IDENTIFIER.match(name) or name == TRITON_ALIAS:
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
        ok = fields == {"kind", "value"} and is_literal(b["value"])
    elif kind == "module":
        ok = fields == {"kind", "name"} and (b["name"] in KERNEL_MODULES or b["name"] == "triton.language.core")
    elif kind == "attr":
        ok = fields in ({"kind", "module", "name"}, {"kind", "module", "name", "constexpr"}) \
            and b["module"] in KERNEL_MODULES and isinstance(b["name"], str) and bool(IDENTIFIER.match(b["name"])) \
            and not b["name"].startswith("_") and b.get("constexpr", True) is True
    else:
        return f"the binding of {name} has unknown kind {kind[:20]!r}"
    return None if ok else f"the binding of {name} ({kind}) is malformed"


def _source_problem(i: int, k: dict) -> str | None:
    """Why source entry ``k`` does not parse to exactly one plain def named as the entry."""
    if not isinstance(k["source"], str) or len(k["source"]) > MAX_SOURCE_CHARS:
        return f"kernel {i}: the source is not text within {MAX_SOURCE_CHARS} characters"
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


__all__ = ["entry_problem", "param_count", "rules_problem", "sources_problem"]
