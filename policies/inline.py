"""Inline the unit modules an expert solution imports, so their tuning knobs become its own text.

Most experts are a few lines calling a unit (``from units.fp8_scaled_gemm.kernel import
fp8_gemm_per_tensor``): their tiles, warps and stages live in the unit's module constants, out of
reach of a policy that edits the candidate's source. ``inline_unit_imports`` replaces each such
top-level import with the imported module's text (its docstring and ``from __future__`` import
dropped; an ``as`` alias becomes an assignment), giving the same program with every knob literal in
one file. One level only: a unit module's own ``from units...`` imports stay imports, except those of
a module inlined before it (its names are already defined above); an import statement already made
above (``import triton.language as tl`` in two inlined modules) is not repeated, so no module-level
name a kernel reads is bound twice (the static rules refuse a rebound name, threat model #8).

Example::

    from hawkeye_env.tasks.registry import solution_source
    from policies.inline import inline_unit_imports
    source = inline_unit_imports(solution_source("fp8_gemm_per_tensor"))  # BLOCK_M = ... inside
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def _defined_names(tree: ast.Module) -> set[str]:
    """Top-level names a module binds by ``def``, ``class`` or assignment (imports excluded: two
    modules importing ``torch`` do not conflict)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


def _top_imports(tree: ast.Module) -> set[str]:
    """The module's top-level import statements other than from ``units`` (those are inlined), as
    ``ast.unparse`` writes them."""
    return {ast.unparse(n) for n in tree.body if isinstance(n, ast.Import)
            or (isinstance(n, ast.ImportFrom) and not (n.module or "").startswith("units."))}


def _module_body(path: Path, made: set[str] = frozenset(), inlined: set[str] = frozenset()) -> tuple[str, ast.Module]:
    """``path``'s text without its docstring, its ``from __future__`` import, the import statements
    in ``made`` and its imports from the modules in ``inlined``; and its tree."""
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    dropped: set[int] = set()
    for i, node in enumerate(tree.body):
        is_doc = i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        is_import = isinstance(node, (ast.Import, ast.ImportFrom))
        if (is_doc or (isinstance(node, ast.ImportFrom) and node.module in ("__future__", *inlined))
                or (is_import and ast.unparse(node) in made)):
            dropped |= set(range(node.lineno, node.end_lineno + 1))
    body = "\n".join(line for n, line in enumerate(text.splitlines(), 1) if n not in dropped).strip("\n")
    return body, tree


def inline_unit_imports(source: str, root: Path = REPO_ROOT) -> str | None:
    """``source`` with each top-level ``from units.<module> import name [as alias]`` replaced by that
    module's text (then ``alias = name`` where aliased). None when ``source`` does not parse,
    imports nothing from ``units``, imports a module that is not a file under ``root``, or an
    inlined module defines a name ``source`` (or another inlined module) defines too."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    imports = [n for n in tree.body if isinstance(n, ast.ImportFrom) and n.level == 0
               and (n.module or "").startswith("units.")]
    if not imports:
        return None
    taken = _defined_names(tree)
    made = _top_imports(tree)  # import statements the output already makes
    replacements: list[tuple[ast.ImportFrom, str]] = []
    inlined: set[str] = set()
    for node in imports:  # in text order: a module's first import carries its body
        path = root.joinpath(*node.module.split(".")).with_suffix(".py")
        if not path.is_file():
            return None
        parts: list[str] = []
        if node.module not in inlined:
            body, unit_tree = _module_body(path, made, inlined)
            names = _defined_names(unit_tree)
            if names & taken:
                return None
            taken |= names
            made |= _top_imports(unit_tree)
            inlined.add(node.module)
            parts.append(f"# -- {node.module}, inlined --\n{body}\n# -- end of {node.module} --")
        parts += [f"{a.asname} = {a.name}" for a in node.names if a.asname and a.asname != a.name]
        replacements.append((node, "\n".join(parts)))
    lines = source.splitlines()
    for node, text in reversed(replacements):  # bottom up, so earlier line numbers stay valid
        lines[node.lineno - 1:node.end_lineno] = text.splitlines()
    out = "\n".join(lines) + "\n"
    ast.parse(out)
    return out


__all__ = ["inline_unit_imports"]
