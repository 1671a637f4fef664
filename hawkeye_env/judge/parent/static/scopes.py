"""Where each name a candidate reads is bound: Python's scoping rules applied to the syntax tree.

The static rules (``static_checker.py``) must tell a read that finds one of the candidate's own
bindings from one that falls through to the module's globals and the builtins. The fall-through
is where Triton's CPU interpreter puts names of its own (it copies ``np``, ``inspect``,
``dataclasses``... into a kernel's module on its first launch, for every name the module lacks),
and where a builtin the allowlist refuses lives. Python's rules, as CPython 3.10-3.13 compile them:

* a function (``def``, ``lambda``, a comprehension) reads a name it binds anywhere in its body
  as a local; otherwise from the nearest enclosing *function* that binds it (class bodies are
  skipped); otherwise from the module's globals, then the builtins. Its decorators, default
  values and annotations are read where the ``def`` runs, in the enclosing scope;
* a class body reads a name it binds itself from the class namespace if the binding has run,
  and otherwise from the globals and builtins (``LOAD_NAME``: an enclosing function's binding of
  the same name is never consulted); a name it does not bind comes from an enclosing function
  or the globals;
* module code reads the globals, then the builtins.

A binding is *sure* at a point when an unconditional top-level statement of the module (or of
the class body) made it before that point: an assignment to the name itself (or within a tuple or
list target), an import, a ``def`` or a ``class``, not one inside ``if``, ``for``, ``while``,
``try`` or ``with``, and the name is never deleted there. A read at module or class level needs a
binding made by an earlier statement. A function's read of a global needs the module's sure
binding anywhere, since it runs once the module has, unless the function may run while the
module still runs: for the names in ``early`` (the interpreter's), the binding must come before
the module's first statement that can run code (one that calls anything), so that no kernel
launched at import can have put the interpreter's value there first. Every other read of a
global *falls through*.

``resolve(tree, early)`` walks iteratively (no recursion, whatever the depth) and returns a
``Resolution``: for every ``Name`` read (and every augmented assignment's target, which is read
first) one of ``"local"``, ``"enclosing"``, ``"class"``, ``"module"`` or ``"fallthrough"`` and,
for locals and enclosing reads, the scope that binds it; for every ``Name`` store or delete, the
kind of scope that binds it (``"function"``, ``"class"`` or ``"module"``).
"""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass, field

FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
COMPREHENSION_NODES = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
UNCONDITIONAL = (ast.Assign, ast.AnnAssign, ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef,
                 ast.ClassDef)
# Decorators under which a function in a class body is still a method called on its instance.
METHOD_DECORATORS = frozenset({"property"})


@dataclass
class Scope:
    """One scope: ``kind`` is ``"module"``, ``"function"`` (functions, lambdas, comprehensions)
    or ``"class"``; ``binds`` how many times it binds each name; ``sure`` (module and class)
    each name's first unconditional top-level binding statement; ``deleted`` the names it
    deletes; ``self_name`` (a method: a plain function of a class body) its first parameter;
    ``code_at`` (the module) its first top-level statement that can run code."""

    kind: str
    parent: Scope | None
    binds: Counter = field(default_factory=Counter)
    sure: dict[str, int] = field(default_factory=dict)
    deleted: set[str] = field(default_factory=set)
    self_name: str = ""
    code_at: int = 0


@dataclass
class Resolution:
    """``where[id(name node)]``: where a read resolves, or a store's binding scope kind;
    ``binder[id(name node)]``: the scope a local or enclosing read finds its binding in."""

    where: dict[int, str]
    binder: dict[int, Scope]


def _target_names(target: ast.AST) -> list[str]:
    """Names an assignment target binds: itself, or inside tuple, list and starred targets (never
    names that are only read, in a subscript or an attribute's value)."""
    names, pending = [], [target]
    while pending:
        t = pending.pop()
        if isinstance(t, ast.Name):
            names.append(t.id)
        elif isinstance(t, (ast.Tuple, ast.List)):
            pending.extend(t.elts)
        elif isinstance(t, ast.Starred):
            pending.append(t.value)
    return names


def _sure_names(stmt: ast.stmt) -> list[str]:
    """Names an unconditional top-level statement binds."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [stmt.name]
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return [a.asname or a.name.split(".")[0] for a in stmt.names]
    if isinstance(stmt, ast.AnnAssign):
        return [stmt.target.id] if stmt.value is not None and isinstance(stmt.target, ast.Name) else []
    if isinstance(stmt, ast.Assign):
        return [n for t in stmt.targets for n in _target_names(t)]
    return []


# Expressions that run none of the candidate's code when evaluated at module level: a call, a
# decorator (applied without a call node), a class base (its ``__init_subclass__``), ``raise C``
# (instantiates ``C``), ``with``, loops and the rest can; these cannot.
_INERT = (ast.Constant, ast.Name, ast.Attribute, ast.Tuple, ast.List, ast.Set, ast.Dict, ast.BinOp, ast.UnaryOp,
          ast.BoolOp, ast.Compare, ast.IfExp, ast.Starred, ast.Subscript, ast.Slice, ast.expr_context, ast.operator,
          ast.boolop, ast.cmpop, ast.unaryop)


def _inert(nodes) -> bool:
    return all(isinstance(n, _INERT) for node in nodes for n in ast.walk(node))


def runs_code(stmt: ast.stmt) -> bool:
    """Whether a top-level statement can run code when the module runs. Only these cannot: imports,
    ``pass``, a docstring, an assignment of an inert expression (names, attributes, literals,
    arithmetic, subscripts), an undecorated ``def`` whose defaults and annotations are inert (its
    body runs later) and an undecorated class without bases whose body holds only such statements."""
    if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.Pass)):
        return False
    if isinstance(stmt, ast.Expr):
        return not (isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str))
    if isinstance(stmt, ast.Assign):
        return not _inert([*stmt.targets, stmt.value])
    if isinstance(stmt, ast.AnnAssign):
        return not _inert([stmt.target, stmt.annotation, *([stmt.value] if stmt.value else [])])
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        args = stmt.args
        parts = [*args.defaults, *(d for d in args.kw_defaults if d is not None),
                 *(a.annotation for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
                   if a is not None and a.annotation is not None), *([stmt.returns] if stmt.returns else [])]
        return bool(stmt.decorator_list) or not _inert(parts)
    if isinstance(stmt, ast.ClassDef):
        return bool(stmt.decorator_list or stmt.bases or stmt.keywords) or any(runs_code(s) for s in stmt.body)
    return True


def _is_method(node: ast.AST, scope: Scope) -> bool:
    return (scope.kind == "class" and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and bool(node.args.posonlyargs or node.args.args)
            and all(isinstance(d, ast.Name) and d.id in METHOD_DECORATORS for d in node.decorator_list))


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
        every = [a for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg] if a]
        yield from ((a, inner, 0) for a in every)
        yield from ((a.annotation, scope, index) for a in every if a.annotation is not None)
        yield from ((d, scope, index) for d in [*args.defaults, *args.kw_defaults] if d is not None)
        if isinstance(node, ast.Lambda):
            yield node.body, inner, 0
        else:
            yield from ((d, scope, index) for d in [*node.decorator_list, node.returns] if d is not None)
            yield from ((stmt, inner, 0) for stmt in node.body)
    elif isinstance(node, ast.arg):
        return  # its annotation belongs to the enclosing scope (above)
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


def _bound_names(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        return [node.id]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.alias):
        return [node.asname or node.name.split(".")[0]]
    if isinstance(node, ast.ExceptHandler) and node.name:
        return [node.name]
    return []


def _collect(tree: ast.Module) -> dict[int, Scope]:
    """Every scope's bindings (pass 1)."""
    module = Scope("module", None)
    module.code_at = next((i for i, s in enumerate(tree.body) if runs_code(s)), len(tree.body))
    scopes = {id(tree): module}
    for node, scope, _, _ in _walk(tree, scopes):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            scope.binds[node.name] += 1
            inner = scopes.setdefault(id(node), Scope("class" if isinstance(node, ast.ClassDef) else "function",
                                                      scope))
            if _is_method(node, scope):
                inner.self_name = (node.args.posonlyargs or node.args.args)[0].arg
        for name in _bound_names(node):
            scope.binds[name] += 1
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Del) or isinstance(node, ast.ExceptHandler):
            scope.deleted.update(_bound_names(node))  # Python deletes a handler's name when it ends
        if isinstance(node, (ast.Module, ast.ClassDef)):
            inner = scopes[id(node)]
            for i, stmt in enumerate(node.body):
                if isinstance(stmt, UNCONDITIONAL):
                    for name in _sure_names(stmt):
                        inner.sure.setdefault(name, i)
    return scopes


class _Reader:
    """Pass 2: where each read resolves."""

    def __init__(self, module: Scope, early: frozenset[str]) -> None:
        self.module, self.early = module, early
        self.binder: Scope | None = None

    def global_(self, name: str, before: int | None) -> str:
        m = self.module
        if name not in m.sure or name in m.deleted:
            return "fallthrough"
        if before is None and name in self.early:
            before = m.code_at  # a function may run while the module still runs (after its first call)
        return "module" if before is None or m.sure[name] < before else "fallthrough"

    def outer(self, name: str, scope: Scope, before: int | None) -> str:
        """A name read from a scope nested in ``scope`` that does not bind it (classes skipped);
        ``before``: the module statement the read runs in, when it runs while the module does."""
        while scope.kind != "module":
            if scope.kind == "function" and name in scope.binds:
                self.binder = scope
                return "enclosing"
            scope = scope.parent
        return self.global_(name, before)

    def read(self, name: str, scope: Scope, index: int, at: int) -> str:
        self.binder = None
        if scope.kind == "function":
            if name in scope.binds:
                self.binder = scope
                return "local"
            return self.outer(name, scope.parent, None)
        before = at if _at_import(scope) else None
        if scope.kind == "class":
            if name in scope.binds:
                if name in scope.sure and name not in scope.deleted and scope.sure[name] < index:
                    return "class"
                return self.global_(name, before)
            return self.outer(name, scope.parent, before)
        return self.global_(name, index)


def _at_import(scope: Scope) -> bool:
    """Whether code directly in ``scope`` runs while the module itself runs (a class body nested
    only in class bodies), so the module's bindings made later are not there yet."""
    while scope.kind == "class":
        scope = scope.parent
    return scope.kind == "module"


def resolve(tree: ast.Module, early: frozenset[str] = frozenset()) -> Resolution:
    """Where every ``Name`` node of ``tree`` resolves (module docstring)."""
    scopes = _collect(tree)
    reader = _Reader(scopes[id(tree)], early)
    where: dict[int, str] = {}
    binder: dict[int, Scope] = {}
    for node, scope, index, at in _walk(tree, scopes):
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            where[id(node)] = reader.read(node.target.id, scope, index, at)
        elif isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                where[id(node)] = reader.read(node.id, scope, index, at)
                if reader.binder is not None:
                    binder[id(node)] = reader.binder
            else:
                where[id(node)] = scope.kind
    return Resolution(where, binder)


__all__ = ["Resolution", "Scope", "resolve", "runs_code"]
