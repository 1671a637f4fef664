"""What the static rules know of the candidate's own classes (``static_checker.py`` reads it).

A method read on its class is a plain function, callable with any object as ``self``; a method's
``self.x = v`` then sets ``x`` on that object (``torch.Tensor.detach``, which the judge calls
outside the op recorder). So the rules keep a class from being a value (``class_use_allowed``:
called, read attributes of, tested with ``isinstance``, a base; ``dataclass_decorator``: the one
class decorator), name each class's methods and functions (``class_facts``) and keep a class's
bases to ``nn.Module`` and the source's own classes (``base_allowed``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass


@dataclass(frozen=True)
class ClassFacts:
    classes: set[str]  # the source's class names
    methods: set[str]  # what a class body defines that binds self when read on an instance
    functions: set[str]  # every function a class body defines
    instances: set[str]  # names bound only to calls of the source's own module-level classes
    own: set[str]  # the class names no other statement binds


def _bindings(tree: ast.AST) -> dict[str, int]:
    """How many times the source binds each name, anywhere."""
    bindings: dict[str, int] = {}
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names = [node.id]
        elif isinstance(node, ast.arg):
            names = [node.arg]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = [node.name]
        elif isinstance(node, ast.alias):
            names = [node.asname or node.name.split(".")[0]]
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names = [node.name]
        for name in names:
            bindings[name] = bindings.get(name, 0) + 1
    return bindings


def class_facts(tree: ast.AST, where: dict[int, str]) -> ClassFacts:
    """``ClassFacts`` of ``tree``; ``where`` is ``static_scopes.resolve``'s. ``methods`` holds
    the plain functions (not static methods; classmethods are refused) and the class-body
    aliases, which may be called with any object as ``self`` when read on the class;
    ``instances`` the names whose every binding is ``name = OwnClass(...)``, the class a
    module-level ``class`` statement binds and nothing rebinds, so the attributes read on them are
    the candidate's own."""
    bindings = _bindings(tree)
    defined = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    classes = {c.name for c in defined}
    methods = {f.name for c in defined for f in c.body
               if isinstance(f, ast.FunctionDef) and not any(
                   isinstance(d, ast.Name) and d.id == "staticmethod" for d in f.decorator_list)}
    methods |= {t.id for c in defined for f in c.body if isinstance(f, ast.Assign)
                and not isinstance(f.value, ast.Constant) for t in f.targets if isinstance(t, ast.Name)}
    functions = {f.name for c in defined for f in c.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
    own_classes = {c for c in classes if bindings.get(c) == 1}
    own: dict[str, int] = {}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Name) and node.value.func.id in own_classes
                and where.get(id(node.value.func)) == "module"):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    own[t.id] = own.get(t.id, 0) + 1
    instances = {name for name, n in own.items() if bindings.get(name) == n}
    return ClassFacts(classes, methods, functions, instances, own_classes)


def imported_names(tree: ast.AST) -> dict[str, str]:
    """``from m import n as local``: local name -> ``"m.n"`` (absolute imports), for the names no
    other statement binds."""
    bindings = _bindings(tree)
    return {a.asname or a.name: f"{node.module}.{a.name}" for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module and not node.level for a in node.names
            if bindings.get(a.asname or a.name) == 1}


def base_allowed(base: ast.AST, own: set[str], modules: dict[str, str], imported: dict[str, str]) -> bool:
    """Whether a class may have ``base``: ``torch.nn.Module`` (``nn.Module``, ``torch.nn.Module``,
    an imported ``Module``) or a class of the source bound once (itself checked). Not torch's
    containers (``ParameterList``, ``ModuleList``, ``Sequential``...), tensors or parameters:
    torch calls their methods from C++ below every dispatch mode (``torch.tensor(param_list)``
    iterates it with the Python dispatch key excluded), so an override would run unrecorded."""
    if isinstance(base, ast.Name):
        return base.id in own or imported.get(base.id) == "torch.nn.Module"
    if not (isinstance(base, ast.Attribute) and base.attr == "Module"):
        return False
    value = base.value
    if isinstance(value, ast.Name):
        return modules.get(value.id) == "torch.nn"
    return (isinstance(value, ast.Attribute) and value.attr == "nn" and isinstance(value.value, ast.Name)
            and modules.get(value.value.id) == "torch")


def dataclass_decorator(node: ast.AST, modules: dict[str, str], imported: bool) -> bool:
    """``dataclass``, ``dataclass(...)`` (``imported``: from ``dataclasses``),
    ``dataclasses.dataclass`` or with a call; ``modules`` maps local names to module paths."""
    func = node.func if isinstance(node, ast.Call) else node
    if isinstance(func, ast.Attribute):
        return (func.attr == "dataclass" and isinstance(func.value, ast.Name)
                and modules.get(func.value.id) == "dataclasses")
    return isinstance(func, ast.Name) and func.id == "dataclass" and imported


def class_use_allowed(node: ast.Name, parent: ast.AST | None) -> bool:
    """Whether a read of a class's name is one of the uses that keep its methods bound: called
    (``C(...)``), tested against (``isinstance(x, C)``), an attribute read on it (``C.x``; the
    method-on-class rule checks which), or a base of a class statement."""
    if isinstance(parent, ast.Call):
        return parent.func is node or (isinstance(parent.func, ast.Name) and parent.func.id == "isinstance"
                                       and len(parent.args) == 2 and parent.args[1] is node)
    if isinstance(parent, ast.Attribute):
        return parent.value is node
    if isinstance(parent, ast.ClassDef):
        return any(b is node for b in parent.bases)
    return False


__all__ = ["ClassFacts", "class_facts", "class_use_allowed", "dataclass_decorator"]
