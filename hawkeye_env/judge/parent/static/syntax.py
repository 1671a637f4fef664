"""Pure syntax helpers of the static checker (``static_checker.py``): the finding record, the
name lists that class bodies and keyed reads are checked against, and small iterative readers of
attribute chains and format strings. Nothing here walks a whole tree; nothing recurses.
"""

from __future__ import annotations

import ast
import string
from dataclasses import dataclass

from hawkeye_env.judge.parent.static.allowlist import MAX_AST_DEPTH


@dataclass(frozen=True)
class Finding:
    """One static violation: ``code`` is a ``VIOLATION_CODES`` key; ``line`` is 1-based."""

    code: str
    line: int
    message: str


def format_fields_safe(text: str) -> bool:
    """True if ``text.format(...)`` reads no attribute or index of its arguments (nested specs
    included, iteratively: a crafted spec could nest thousands deep)."""
    pending = [(text, 0)]
    while pending:
        text, level = pending.pop()
        if level > 2:  # str.format itself stops at two levels ("Max string recursion exceeded")
            return False
        try:
            parsed = list(string.Formatter().parse(text))
        except ValueError:
            return False
        for _, field, spec, _ in parsed:
            if field is not None and ("." in field or "[" in field):
                return False
            if spec:
                pending.append((spec, level + 1))
    return True


def dotted(node: ast.AST) -> str:
    """``a.b[...].c`` for an attribute chain, without recursion (``ast.unparse`` recurses)."""
    parts: list[str] = []
    for _ in range(32):
        if isinstance(node, ast.Attribute):
            parts.append("." + node.attr)
            node = node.value
        elif isinstance(node, ast.Subscript):
            parts.append("[...]")
            node = node.value
        elif isinstance(node, ast.Call):
            parts.append("()")
            node = node.func
        else:
            break
    if isinstance(node, ast.Name):
        root = node.id
    elif isinstance(node, ast.Constant):
        root = repr(node.value)[:40]
    else:
        root = f"<{type(node).__name__.lower()}>"
    return root + "".join(reversed(parts))


# Builtins that reach code, frames or files: no class body may define a name of these (a class-body
# name is readable on other objects, static_checks.py).
CLASS_BODY_FORBIDDEN = frozenset({"exec", "eval", "compile", "open", "globals", "locals", "vars", "getattr",
                                  "setattr", "delattr", "breakpoint", "input", "memoryview", "object", "type",
                                  "super", "dir", "help"})


def string_annotation(node: ast.AST) -> bool:
    """Whether ``node`` (a parameter, an annotated assignment or a ``def``'s return) is annotated
    with anything holding a string constant."""
    annotation = node.returns if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else node.annotation
    return annotation is not None and any(isinstance(n, ast.Constant) and isinstance(n.value, str)
                                          for n in ast.walk(annotation))


# Methods that read a mapping by key, checked like a subscript.
KEYED_METHODS = frozenset({"get", "pop", "setdefault"})
# Names a candidate must define though nn.Module carries them: its forward.
DEFINABLE = frozenset({"forward"})


def class_body_names(node: ast.ClassDef) -> list[str]:
    names = []
    for item in node.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(item.name)
        elif isinstance(item, ast.Assign):
            names += [n.id for t in item.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            names.append(item.target.id)
    return names


def annotations_of(node: ast.AST) -> list[ast.AST]:
    """The annotation expressions ``node`` carries: an argument's, a function's return, an
    annotated assignment's."""
    if isinstance(node, ast.arg):
        return [node.annotation] if node.annotation is not None else []
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return [node.returns] if node.returns is not None else []
    if isinstance(node, ast.AnnAssign):
        return [node.annotation]
    return []


# Builtins the rules read by name (a method's decorator, isinstance's class argument, a class
# decorator): a binding of the candidate's under one of these names would pass as the builtin.
RULE_NAMES = frozenset({"isinstance", "property", "staticmethod", "classmethod", "dataclass"})
INERT_ANNOTATION_NODES = (ast.Name, ast.Attribute, ast.Subscript, ast.Tuple, ast.List, ast.Constant, ast.BinOp,
                          ast.BitOr, ast.Load)


def inert_annotation(node: ast.AST) -> bool:
    """Whether an annotation only names things (``C``, ``dict[str, C]``, ``C | None``): Python
    3.10-3.13 evaluate annotations when the ``def`` runs, so one with a call runs code."""
    return all(isinstance(n, INERT_ANNOTATION_NODES) for n in ast.walk(node))


def rebinds_rule_name(node: ast.AST) -> str:
    """The ``RULE_NAMES`` entry ``node`` binds ("" when none): a definition, an assignment or
    deletion target, a parameter, or an import's local name (``from dataclasses import
    dataclass`` itself excepted)."""
    names: list[str] = []
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        names = [node.name]
    elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        names = [node.id]
    elif isinstance(node, ast.arg):
        names = [node.arg]
    elif isinstance(node, ast.ExceptHandler) and node.name:
        names = [node.name]
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        trusted = isinstance(node, ast.ImportFrom) and node.module == "dataclasses"
        names = [a.asname or a.name.split(".")[0] for a in node.names
                 if not (trusted and a.name == "dataclass" and not a.asname)]
    return next((n for n in names if n in RULE_NAMES), "")


def chain_root(node: ast.AST) -> ast.AST:
    for _ in range(MAX_AST_DEPTH):
        if not isinstance(node, (ast.Attribute, ast.Subscript)):
            break
        node = node.value
    return node
