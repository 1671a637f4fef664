"""Where each name a candidate reads is bound: Python's scoping rules applied to the syntax tree.

The static rules (``static_checker.py``) must tell a read that finds one of the candidate's own
bindings from one that falls through to the module's globals and the builtins. The fall-through
is where Triton's CPU interpreter puts names of its own (it copies ``np``, ``inspect``, ``ast``...
into a kernel's module on its first launch, for every name the module lacks), and where a
builtin the allowlist refuses lives. Python's rules, as CPython 3.10-3.13 compile them:

* a function (``def``, ``lambda``, a comprehension) reads a name it binds anywhere in its body
  as a local; otherwise from the nearest enclosing *function* that binds it (class bodies are
  skipped); otherwise from the module's globals, then the builtins;
* a class body reads a name it binds itself from the class namespace if the binding has run,
  and otherwise from the globals and builtins (``LOAD_NAME``: an enclosing function's binding of
  the same name is never consulted); a name it does not bind comes from an enclosing function
  or the globals;
* module code reads the globals, then the builtins.

A binding is *sure* at a point when an unconditional top-level statement of the module (or of
the class body) made it before that point: an assignment, an import, a ``def`` or a ``class``,
not one inside ``if``, ``for``, ``while``, ``try`` or ``with``, and the name is never deleted
there. A function's read of a global needs the module's sure binding anywhere in the module (it
runs once the module has); a read at module or class level needs one made by an earlier
statement. Every other read of a global *falls through*.

``resolve(tree)`` walks iteratively (no recursion, whatever the depth) and returns, for every
``Name`` read (and every augmented assignment's target, which is read first), one of
``"local"``, ``"enclosing"``, ``"class"``, ``"module"`` or ``"fallthrough"``; and for every
``Name`` store or delete, the kind of scope that binds it (``"function"``, ``"class"`` or
``"module"``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
COMPREHENSION_NODES = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
UNCONDITIONAL = (ast.Assign, ast.AnnAssign, ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef,
                 ast.ClassDef)


@dataclass
class Scope:
    """One scope: ``kind`` is ``"module"``, ``"function"`` (functions, lambdas, comprehensions)
    or ``"class"``; ``bound`` every name it binds; ``sure`` (module and class) each name's first
    unconditional top-level binding statement; ``deleted`` the names it deletes."""

    kind: str
    parent: Scope | None
    bound: set[str] = field(default_factory=set)
    sure: dict[str, int] = field(default_factory=dict)
    deleted: set[str] = field(default_factory=set)


def _sure_names(stmt: ast.stmt) -> list[str]:
    """Names an unconditional top-level statement binds."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [stmt.name]
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return [a.asname or a.name.split(".")[0] for a in stmt.names]
    if isinstance(stmt, ast.AnnAssign):
        return [stmt.target.id] if stmt.value is not None and isinstance(stmt.target, ast.Name) else []
    if isinstance(stmt, ast.Assign):
        return [n.id for t in stmt.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    return []


def _children(node: ast.AST, scope: Scope, index: int, scopes: dict[int, Scope]):
    """``(child, its scope, its top-level statement index)`` for each child of ``node``; a child
    that opens a scope gets it from ``scopes`` (made on first sight)."""

    def opened(kind: str) -> Scope:
        if id(node) not in scopes:
            scopes[id(node)] = Scope(kind, scope)
        return scopes[id(node)]

    if isinstance(node, FUNCTION_NODES):
        inner = opened("function")
        args = node.args
        yield from ((a, inner, 0) for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg,
                                            args.kwarg] if a is not None)
        yield from ((d, scope, index) for d in [*args.defaults, *args.kw_defaults] if d is not None)
        if isinstance(node, ast.Lambda):
            yield node.body, inner, 0
        else:
            yield from ((d, scope, index) for d in [*node.decorator_list, node.returns] if d is not None)
            yield from ((stmt, inner, 0) for stmt in node.body)
    elif isinstance(node, ast.ClassDef):
        inner = opened("class")
        body = {id(s): i for i, s in enumerate(node.body)}
        for child in ast.iter_child_nodes(node):
            yield (child, inner, body[id(child)]) if id(child) in body else (child, scope, index)
    elif isinstance(node, COMPREHENSION_NODES):
        inner = opened("function")
        first = node.generators[0].iter
        for child in ast.iter_child_nodes(node):
            if child is node.generators[0]:
                yield first, scope, index
                yield from ((c, inner, 0) for c in ast.iter_child_nodes(child) if c is not first)
            else:
                yield child, inner, 0
    elif isinstance(node, ast.Module):
        yield from ((s, scope, i) for i, s in enumerate(node.body))
    else:
        yield from ((child, scope, index) for child in ast.iter_child_nodes(node))


def _bind(node: ast.AST, scope: Scope) -> None:
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        scope.bound.add(node.id)
        if isinstance(node.ctx, ast.Del):
            scope.deleted.add(node.id)
    elif isinstance(node, ast.arg):
        scope.bound.add(node.arg)
    elif isinstance(node, ast.alias):
        scope.bound.add(node.asname or node.name.split(".")[0])
    elif isinstance(node, ast.ExceptHandler) and node.name:
        scope.bound.add(node.name)
        scope.deleted.add(node.name)  # Python deletes it when the handler ends


def _walk(tree: ast.Module, scopes: dict[int, Scope]):
    """Every node with its scope, its top-level statement index in that scope's body and the index
    of the module's top-level statement it is in, iteratively."""
    module = scopes[id(tree)]
    stack = [(tree, module, 0, 0)]
    while stack:
        node, scope, index, at = stack.pop()
        yield node, scope, index, at
        stack.extend((child, inner, i, i if node is tree else at)
                     for child, inner, i in _children(node, scope, index, scopes))


def _collect(tree: ast.Module) -> dict[int, Scope]:
    """Every scope's bindings (pass 1)."""
    scopes = {id(tree): Scope("module", None)}
    for node, scope, _, _ in _walk(tree, scopes):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            scope.bound.add(node.name)
        _bind(node, scope)
        if isinstance(node, (ast.Module, ast.ClassDef)):
            inner = scopes.setdefault(id(node), Scope("class", scope))
            for i, stmt in enumerate(node.body):
                if isinstance(stmt, UNCONDITIONAL):
                    for name in _sure_names(stmt):
                        inner.sure.setdefault(name, i)
    return scopes


def _global(name: str, module: Scope, before: int | None) -> str:
    if name in module.sure and name not in module.deleted and (before is None or module.sure[name] < before):
        return "module"
    return "fallthrough"


def _at_import(scope: Scope) -> bool:
    """Whether code directly in ``scope`` runs while the module itself runs (a class body nested
    only in class bodies), so the module's bindings made later are not there yet."""
    while scope.kind == "class":
        scope = scope.parent
    return scope.kind == "module"


def _outer(name: str, scope: Scope, module: Scope, before: int | None) -> str:
    """A name read from a scope nested in ``scope`` that does not bind it (classes skipped);
    ``before``: the module statement the read runs in, when it runs while the module does."""
    while scope.kind != "module":
        if scope.kind == "function" and name in scope.bound:
            return "enclosing"
        scope = scope.parent
    return _global(name, module, before)


def _read(name: str, scope: Scope, index: int, module: Scope, at: int) -> str:
    if scope.kind == "function":
        return "local" if name in scope.bound else _outer(name, scope.parent, module, None)
    before = at if _at_import(scope) else None
    if scope.kind == "class":
        if name in scope.bound:
            if name in scope.sure and name not in scope.deleted and scope.sure[name] < index:
                return "class"
            return _global(name, module, before)
        return _outer(name, scope.parent, module, before)
    return _global(name, module, index)


def resolve(tree: ast.Module) -> dict[int, str]:
    """``id(node)`` -> where it resolves, for every ``Name`` node of ``tree`` (module docstring)."""
    scopes = _collect(tree)
    module = scopes[id(tree)]
    found: dict[int, str] = {}
    for node, scope, index, at in _walk(tree, scopes):
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            found[id(node)] = _read(node.target.id, scope, index, module, at)
        elif isinstance(node, ast.Name):
            found[id(node)] = (_read(node.id, scope, index, module, at) if isinstance(node.ctx, ast.Load)
                               else scope.kind)
    return found


__all__ = ["Scope", "resolve"]
