"""Kernels compiled from the text that was checked, and the source decoded as it was checked.

Two readers of a candidate's file see other code than the static checker's ``ast.parse`` of the
source string unless the source is shaped for them:

* Python's import decodes the file by its coding declaration (PEP 263): under ``# coding: utf-7``
  the text ``#+AAo-x = 2`` is a comment to the checker and a second line ``x = 2`` to the import.
  Only a source without a declaration, or one declaring UTF-8, is accepted.
* Triton's CPU interpreter compiles a kernel anew from ``inspect.getsourcelines``: it starts at the
  *last* line whose stripped text begins with ``def `` (``FunctionRewriter._find_def``) and runs
  what follows as a module-level function of the kernel's module, read against the module's
  globals. A ``def`` line in a string or a nested ``def`` makes it compile other code than the
  kernel (a string's text is never checked), and a kernel defined inside a function loses its
  enclosing scope, so a name the checker resolved to a parameter falls through to the builtins.
  So ``triton.jit`` and Gluon's ``jit`` appear only as the decorator of a module-level ``def``
  (called, for keyword arguments, or bare; never applied as a function), and within that
  ``def``'s lines, its decorators included, its own header is the only line that begins with
  ``def ``.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Callable

from hawkeye_env.judge.static_syntax import Finding

# The functions that turn a Python function into a kernel the CPU interpreter recompiles.
JIT_PATHS = frozenset({"triton.jit", "triton.experimental.gluon.jit"})
# Line breaks as Python's tokenizer and universal newlines count them (str.splitlines splits on
# more characters, which would number the lines apart from the syntax tree's).
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def encoding_findings(source: str) -> list[Finding]:
    """A finding if the file the worker writes (``source`` as UTF-8) declares another encoding, or
    one Python does not know: the import would decode other text than the one checked."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source.encode("utf-8", "surrogatepass")).readline)
    except SyntaxError as exc:
        return [Finding("forbidden_call", 1, f"the coding declaration is refused by Python ({exc.msg})")]
    if encoding not in ("utf-8", "utf-8-sig"):
        return [Finding("forbidden_call", 1, f"a coding declaration of {encoding}: the import would decode other "
                        "code than the checked text; write the source in UTF-8 without one (#18)")]
    return []


def _jit_aliases(tree: ast.Module) -> set[str]:
    """Names bound by ``from triton import jit`` and its kin."""
    return {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
            for a in node.names if f"{node.module}.{a.name}" in JIT_PATHS}


def _is_jit(node: ast.AST, module_of: Callable[[ast.AST], str | None], aliases: set[str]) -> bool:
    """Whether ``node`` (a name or attribute read) is one of ``JIT_PATHS``."""
    if isinstance(node, ast.Name):
        return node.id in aliases
    if isinstance(node, ast.Attribute):
        return f"{module_of(node.value)}.{node.attr}" in JIT_PATHS
    return False


def kernel_findings(tree: ast.Module, source: str, module_of: Callable[[ast.AST], str | None]) -> list[Finding]:
    """Findings for ``jit`` read anywhere but as a module-level ``def``'s decorator, and for a
    kernel whose lines hold a line beginning ``def `` other than its header (module docstring).
    ``module_of`` maps an expression to the module path it evaluates to (``Checker.module_of``)."""
    aliases = _jit_aliases(tree)
    lines = _LINE_BREAK.split(source)
    placed: set[int] = set()
    findings: list[Finding] = []
    for stmt in tree.body:
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        decorators = [d.func if isinstance(d, ast.Call) else d for d in stmt.decorator_list]
        jitted = [d for d in decorators if _is_jit(d, module_of, aliases)]
        placed.update(id(d) for d in jitted)
        if not jitted:
            continue
        first = min(d.lineno for d in stmt.decorator_list)
        headers = [i for i in range(first, stmt.end_lineno + 1)
                   if i <= len(lines) and lines[i - 1].strip().startswith("def ")]
        if headers != [stmt.lineno]:
            others = [i for i in headers if i != stmt.lineno] or [stmt.lineno]
            findings.append(Finding("forbidden_call", others[0], f"kernel {stmt.name}: line {others[0]} begins "
                                    "with 'def ' (a nested def or a string), or its header does not: Triton's CPU "
                                    "interpreter would compile from the last such line; keep one def per kernel (#18)"))
    for node in ast.walk(tree):
        if id(node) not in placed and isinstance(node, (ast.Name, ast.Attribute)) and isinstance(
                node.ctx, ast.Load) and _is_jit(node, module_of, aliases):
            findings.append(Finding("forbidden_call", node.lineno, "jit is allowed only as the decorator of a "
                                    "module-level def: Triton's CPU interpreter recompiles a kernel at module "
                                    "level, outside any enclosing function (#18)"))
    return findings


__all__ = ["JIT_PATHS", "encoding_findings", "kernel_findings"]
