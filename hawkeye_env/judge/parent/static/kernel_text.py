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
  So ``triton.jit`` and Gluon's ``jit`` appear only as the innermost decorator of a module-level
  ``def`` (called, for keyword arguments, or bare; never applied as a function), with nothing but
  ``triton.autotune(...)`` and ``triton.heuristics(...)`` above it (a decorator below would hand
  ``jit`` another function than the checked one); the block that ``inspect.getblock`` finds for
  the kernel, with the pure-Python ``tokenize`` that can end a block where CPython's parser does
  not (a line holding only a backslash), must be the ``def``'s own lines, and its header the
  only one of them that begins with ``def ``.
"""

from __future__ import annotations

import ast
import inspect
import io
import tokenize
from collections.abc import Callable

from hawkeye_env.judge.parent.static.syntax import Finding

# The functions that turn a Python function into a kernel the CPU interpreter recompiles.
JIT_PATHS = frozenset({"triton.jit", "triton.experimental.gluon.jit"})
# What may wrap a kernel above its jit: they take the kernel object, not a Python function.
KERNEL_WRAPPERS = frozenset({"triton.autotune", "triton.heuristics"})


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


def _interpreter_lines(source: str) -> list[str]:
    """The file's lines as ``linecache`` gives them to ``inspect`` (universal newlines, split on
    ``\\n`` alone, every line ending in one)."""
    lines = io.StringIO(source.replace("\r\n", "\n").replace("\r", "\n")).readlines()
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    return lines


def _block_problem(stmt: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> tuple[int, str] | None:
    """``(line, why)`` if the interpreter's text of kernel ``stmt`` is not the checked ``def``: the
    block ``inspect.getblock`` finds from the first decorator (pure-Python ``tokenize``, which can
    end a block where CPython's parser does not: a line holding only a backslash) must end where
    the ``def`` ends, blank or comment lines aside, and hold no line beginning ``def `` but its
    header."""
    first = min([d.lineno for d in stmt.decorator_list] + [stmt.lineno])
    try:
        block = inspect.getblock(lines[first - 1:])
    except (SyntaxError, tokenize.TokenError, ValueError):
        return stmt.lineno, "Python's tokenize cannot read its block"
    last = first + len(block) - 1
    if last < stmt.end_lineno:
        return last + 1, f"inspect ends its block at line {last}, before the def ends"
    if any(line.strip() and not line.strip().startswith("#") for line in lines[stmt.end_lineno:last]):
        return stmt.end_lineno + 1, f"inspect carries its block on to line {last}, past the def"
    for i in range(first, last + 1):
        if i != stmt.lineno and lines[i - 1].strip().startswith("def "):
            return i, f"line {i} begins with 'def ' (a nested def or a string)"
    if not lines[stmt.lineno - 1].strip().startswith("def "):
        return stmt.lineno, "its header line does not begin with 'def '"
    return None


def _decorator_problem(stmt, module_of: Callable[[ast.AST], str | None], aliases: set[str]) -> str | None:
    """Why a kernel's decorators are not ``jit`` innermost with only Triton's ``autotune`` and
    ``heuristics`` above it: ``jit`` must receive the checked ``def`` itself, not what another
    decorator returns in its place."""
    *outer, inner = stmt.decorator_list
    if not _is_jit(inner.func if isinstance(inner, ast.Call) else inner, module_of, aliases):
        return "jit is not its innermost decorator, so jit would wrap what the others return, not this def"
    for d in outer:
        if not (isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute)
                and f"{module_of(d.func.value)}.{d.func.attr}" in KERNEL_WRAPPERS):
            return "a decorator other than triton.autotune(...) or triton.heuristics(...) above jit"
    return None


def jit_defs(tree: ast.Module, module_of: Callable[[ast.AST], str | None]) -> list[ast.FunctionDef]:
    """The module-level ``def``s that a ``jit`` decorates: the source's kernels."""
    aliases = _jit_aliases(tree)
    return [stmt for stmt in tree.body if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
        _is_jit(d.func if isinstance(d, ast.Call) else d, module_of, aliases) for d in stmt.decorator_list)]


def kernel_findings(tree: ast.Module, source: str, module_of: Callable[[ast.AST], str | None]) -> list[Finding]:
    """Findings for ``jit`` read anywhere but as a module-level ``def``'s decorator, and for a
    kernel whose decorators or text the interpreter would read otherwise than the checker did
    (module docstring). ``module_of`` maps an expression to the module path it evaluates to
    (``Checker.module_of``)."""
    aliases = _jit_aliases(tree)
    lines = _interpreter_lines(source)
    placed: set[int] = set()
    findings: list[Finding] = []
    for stmt in tree.body:
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        jitted = [f for d in stmt.decorator_list if _is_jit(f := d.func if isinstance(d, ast.Call) else d,
                                                             module_of, aliases)]
        placed.update(id(d) for d in jitted)
        if not jitted:
            continue
        why = _decorator_problem(stmt, module_of, aliases)
        if why:
            findings.append(Finding("forbidden_call", stmt.lineno, f"kernel {stmt.name}: {why} (#18)"))
        problem = _block_problem(stmt, lines)
        if problem:
            findings.append(Finding("forbidden_call", problem[0], f"kernel {stmt.name}: {problem[1]}: Triton's CPU "
                                    "interpreter recompiles a kernel from the text inspect finds, from its last line "
                                    "beginning 'def '; keep one plain def per kernel (#18)"))
    for node in ast.walk(tree):
        if id(node) not in placed and isinstance(node, (ast.Name, ast.Attribute)) and isinstance(
                node.ctx, ast.Load) and _is_jit(node, module_of, aliases):
            findings.append(Finding("forbidden_call", node.lineno, "jit is allowed only as the decorator of a "
                                    "module-level def: Triton's CPU interpreter recompiles a kernel at module "
                                    "level, outside any enclosing function (#18)"))
    return findings


__all__ = ["JIT_PATHS", "KERNEL_WRAPPERS", "encoding_findings", "jit_defs", "kernel_findings"]
