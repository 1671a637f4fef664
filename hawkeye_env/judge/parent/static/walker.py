"""The static checker's walk: one pass over a candidate's syntax tree, every node against the rules.

The rules themselves are described in ``static_checks.py`` (the entry points, ``check_source``)
and listed in ``static_allowlist.py``; which modules and module attributes a candidate reaches is
``static_modules.py``; the finding record and small syntax readers are ``static_syntax.py``.
``Checker.run`` is iterative (an explicit stack, no recursion), so a tree of any depth is walked
without raising; depth past ``MAX_AST_DEPTH`` is itself a finding (#23).
"""

from __future__ import annotations

import ast

from hawkeye_env.judge.parent.static.allowlist import (
    ALLOWED_BUILTINS,
    ALLOWED_DUNDERS,
    ALLOWED_NODES,
    BUILTIN_NAMES,
    FORBIDDEN_ATTRIBUTE_PREFIXES,
    FORBIDDEN_ATTRIBUTES,
    FORBIDDEN_DUNDER_NAMES,
    INTERPRETER_GLOBALS,
    INTERPRETER_NAMES,
    MAX_AST_DEPTH,
    OBJECT_ATTRIBUTES,
)
from hawkeye_env.judge.parent.static.classes import (
    base_allowed,
    class_facts,
    class_use_allowed,
    dataclass_decorator,
    imported_names,
)
from hawkeye_env.judge.parent.static.foreign import CODE_ATTRIBUTES, FOREIGN_ATTRIBUTES
from hawkeye_env.judge.parent.static.modules import attribute_allowed, importable, is_module
from hawkeye_env.judge.parent.static.scopes import Scope, resolve
from hawkeye_env.judge.parent.static.syntax import (
    CLASS_BODY_FORBIDDEN,
    DEFINABLE,
    KEYED_METHODS,
    Finding,
    annotations_of,
    chain_root,
    class_body_names,
    dotted,
    format_fields_safe,
    inert_annotation,
    rebinds_rule_name,
    string_annotation,
)


class Checker:
    """One pass over a parsed module: ``Checker(tree).run()`` returns its ``Finding`` list (in walk
    order, duplicates possible) and never raises for a parsed tree."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.findings: list[Finding] = []
        self.modules: dict[str, str] = {}  # local name -> module path
        self.on_self: set[str] = set()  # attribute names the source assigns as self.x
        self.in_classes: set[str] = set()  # names the source's class bodies define
        self.where: dict[int, str] = {}  # each Name node: where its read resolves, or its binding scope
        self.binder: dict[int, Scope] = {}  # each local or enclosing read: the scope that binds it
        self.functions: set[str] = set()  # the source's module-level and nested function names
        self.instances: set[str] = set()  # names bound only to calls of the source's own classes
        self.classes: set[str] = set()  # the source's class names
        self.own_classes: set[str] = set()  # those no other statement binds
        self.imported: dict[str, str] = {}  # from m import n as local: local -> m.n
        self.methods: set[str] = set()  # plain methods (not static or class methods) of those classes
        self.class_functions: set[str] = set()  # every function a class body defines
        self.annotations: set[int] = set()  # ids of the nodes inside annotations (where a class may be named)
        self.dataclass_imported = False  # from dataclasses import dataclass
        self.line = 0  # line of the nearest node that has one (match_case, arguments... have none)

    def _add(self, code: str, node: ast.AST, message: str) -> None:
        self.findings.append(Finding(code, getattr(node, "lineno", self.line), message))

    def _collect(self) -> None:
        """Module aliases and defined attribute names, read before the checks (order-free)."""
        resolution = resolve(self.tree, INTERPRETER_GLOBALS)
        self.where, self.binder = resolution.where, resolution.binder
        for node in ast.walk(self.tree):
            for annotation in annotations_of(node):
                if inert_annotation(annotation):  # one that calls nothing when the def runs
                    self.annotations.update(id(n) for n in ast.walk(annotation))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions.add(node.name)
            if isinstance(node, ast.Import):
                for a in node.names:
                    local, path = (a.asname, a.name) if a.asname else (a.name.split(".")[0], a.name.split(".")[0])
                    if is_module(path):
                        self.modules[local] = path
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                self.dataclass_imported |= node.module == "dataclasses" and any(
                    a.name == "dataclass" and not a.asname for a in node.names)
                for a in node.names:
                    if is_module(f"{node.module}.{a.name}"):
                        self.modules[a.asname or a.name] = f"{node.module}.{a.name}"
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                root = chain_root(node)
                if self._is_self(root):
                    self.on_self.add(node.attr)
            elif isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.ClassDef)):
                        self.in_classes.add(item.name)
                    elif isinstance(item, (ast.Assign, ast.AnnAssign)):
                        for t in item.targets if isinstance(item, ast.Assign) else [item.target]:
                            if isinstance(t, ast.Name):
                                self.in_classes.add(t.id)

    def _collect_instances(self) -> None:
        """The source's classes, their methods and functions, and its names bound only to
        instances of them (``static_classes.class_facts``)."""
        facts = class_facts(self.tree, self.where)
        self.classes, self.methods, self.own_classes = facts.classes, facts.methods, facts.own
        self.imported = imported_names(self.tree)
        self.class_functions, self.instances = facts.functions, facts.instances

    def _check_definitions(self) -> None:
        """No class body and no ``self.x`` defines a name that kernels, tensors, modules or the
        interpreter's objects carry with code behind it (``CODE_ATTRIBUTES``): a name the candidate
        defines is readable on its own objects, and a method called with a foreign object as
        ``self`` would read that object's (``ModelNew.f(kernel)``, ``C.alias(kernel)``)."""
        for node in ast.walk(self.tree):
            names: list[str] = []
            if isinstance(node, ast.ClassDef):
                names = class_body_names(node)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and isinstance(
                    node.value, ast.Name) and node.value.id == "self":
                names = [node.attr]
            for name in names:
                if name in CODE_ATTRIBUTES and name not in OBJECT_ATTRIBUTES and name not in DEFINABLE:
                    self._add("forbidden_attribute", node, f"defines {name}: kernels, tensors, modules or the "
                              "interpreter's objects carry a name of code there; choose another name (#18)")

    def module_of(self, node: ast.AST) -> str | None:
        """The module path ``node`` evaluates to (``F`` -> ``torch.nn.functional``), else None."""
        attrs: list[str] = []
        while isinstance(node, ast.Attribute) and len(attrs) < MAX_AST_DEPTH:
            attrs.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id not in self.modules:
            return None
        path = self.modules[node.id]
        for attr in reversed(attrs):
            if not is_module(f"{path}.{attr}") or not attribute_allowed(path, attr):
                return None
            path = f"{path}.{attr}"
        return path

    def run(self) -> list[Finding]:
        self._collect()
        self._collect_instances()
        self._check_definitions()
        # (node, parent, depth, parent's line)
        stack: list[tuple[ast.AST, ast.AST | None, int, int]] = [(self.tree, None, 1, 0)]
        too_deep = False
        while stack:
            node, parent, depth, line = stack.pop()
            self.line = getattr(node, "lineno", line)
            if depth > MAX_AST_DEPTH:
                if not too_deep:
                    too_deep = True
                    self._add("forbidden_call", node, f"the syntax tree nests more than {MAX_AST_DEPTH} levels "
                              "deep: no kernel needs that, and deep trees crash parent-side tools (#23)")
                continue
            self._check(node, parent)
            for child in ast.iter_child_nodes(node):
                stack.append((child, node, depth + 1, self.line))
        return self.findings

    def _check(self, node: ast.AST, parent: ast.AST | None) -> None:
        kind = type(node)
        if rebinds_rule_name(node):
            self._add("forbidden_call", node, f"binds {rebinds_rule_name(node)}: the rules read that builtin "
                      "by its name; use another name (#18)")
        if kind in (ast.Global, ast.Nonlocal):
            word = "global" if kind is ast.Global else "nonlocal"
            self._add("global_state", node, f"{word} {', '.join(node.names)}: module state across calls (#7)")
        elif kind not in ALLOWED_NODES:
            code = "forbidden_attribute" if kind.__name__.startswith("Match") else "forbidden_call"
            self._add(code, node, f"syntax {kind.__name__} is not allowed in a candidate (#18)")
        elif kind is ast.comprehension and node.is_async:
            self._add("forbidden_call", node, "syntax async comprehension is not allowed in a candidate (#18)")
        elif kind is ast.Import:
            self._import(node)
        elif kind is ast.ImportFrom:
            self._import_from(node)
        elif kind is ast.Name:
            self._name(node, parent)
        elif kind is ast.Attribute:
            self._attribute(node, parent)
        elif kind is ast.Subscript and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            key = node.slice.value  # x["__globals__"] reads what x.__globals__ would; g["exec"] a builtin
            if not self._forbidden_name(key, node) and key in BUILTIN_NAMES and key not in ALLOWED_BUILTINS:
                self._add("forbidden_call", node, f"subscript [{key!r}]: the builtin {key} is not allowed")
        elif kind is ast.Subscript and any(isinstance(n, ast.Constant) and isinstance(n.value, str)
                                           for n in ast.walk(node.slice)):
            self._add("forbidden_attribute", node, "a subscript key built from strings at run time "
                      "(g['__built' + 'ins__']) escapes the key rules: use a literal key (#18)")
        elif (kind is ast.Call and isinstance(node.func, ast.Attribute) and node.func.attr in KEYED_METHODS
              and node.args):
            self._key_argument(node, node.args[0])
        elif kind is ast.AugAssign and isinstance(node.target, ast.Name) and self.where.get(
                id(node)) == "fallthrough" and node.target.id not in ALLOWED_BUILTINS:
            self._add("forbidden_call", node, f"{node.target.id} += ...: the name is not surely bound where it is "
                      "read (#18)")
        elif kind in (ast.arg, ast.AnnAssign, ast.FunctionDef, ast.AsyncFunctionDef) and string_annotation(node):
            self._add("forbidden_call", node, "a string annotation: typing.get_type_hints (Triton's and Gluon's "
                      "among its callers) evaluates it with the builtins; annotate with the name itself (#18)")
        elif kind is ast.arg and node.arg.startswith("__"):
            self._add("forbidden_attribute", node, f"name {node.arg} is not allowed")
        elif kind is ast.FunctionDef:
            if node.name.startswith("__") and node.name not in ALLOWED_DUNDERS:
                self._add("forbidden_attribute", node, f"defining {node.name} is not allowed: it runs outside forward")
        elif kind is ast.ClassDef:
            self._class_def(node)
        elif kind is ast.Call and isinstance(node.func, ast.Name) and node.func.id == "super" and (
                node.args or node.keywords):
            self._add("forbidden_call", node, "super() with arguments is not allowed: call it bare (#18)")

    def _class_def(self, node: ast.ClassDef) -> None:
        """A class statement: no builtin's name in its body, no decorator but ``dataclass``, no
        class keywords, and bases that are ``nn.Module`` or the source's own classes."""
        if any(n in CLASS_BODY_FORBIDDEN for n in class_body_names(node)):
            names = sorted(n for n in class_body_names(node) if n in CLASS_BODY_FORBIDDEN)
            self._add("forbidden_call", node, f"class {node.name} defines {', '.join(names)}: a builtin's name, "
                      "which would open that attribute on other objects (#18)")
        elif not all(dataclass_decorator(d, self.modules, self.dataclass_imported) for d in node.decorator_list):
            self._add("forbidden_call", node, f"class {node.name}: a class decorator other than "
                      "dataclasses.dataclass receives the class itself as a value (#18)")
        elif node.keywords:
            self._add("forbidden_call", node,
                      f"class {node.name}: class keywords (metaclass=...) are not allowed (#18)")
        elif not all(base_allowed(b, self.own_classes, self.modules, self.imported) for b in node.bases):
            self._add("forbidden_call", node, f"class {node.name}: a base other than nn.Module or a class of the "
                      "source; torch calls its containers' and tensors' methods below the op recorder (#18)")

    def _key_argument(self, node: ast.Call, key: ast.AST) -> None:
        """``d.get(key)``, ``d.pop(key)``, ``d.setdefault(key)``: the subscript rules on ``key``."""
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            if not self._forbidden_name(key.value, node) and key.value in BUILTIN_NAMES and (
                    key.value not in ALLOWED_BUILTINS):
                self._add("forbidden_call", node, f".{node.func.attr}({key.value!r}): the builtin {key.value} is "
                          "not allowed")
        elif any(isinstance(n, ast.Constant) and isinstance(n.value, str) for n in ast.walk(key)):
            self._add("forbidden_attribute", node, f"a .{node.func.attr}() key built from strings at run time "
                      "escapes the key rules: use a literal key (#18)")

    def _import(self, node: ast.Import) -> None:
        for a in node.names:
            if not importable(a.name):
                self._add("forbidden_import", node, f"import {a.name} is not allowed")
            if (a.asname or "").startswith("__"):
                self._add("forbidden_attribute", node, f"name {a.asname} is not allowed")

    def _import_from(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level or not importable(module):
            self._add("forbidden_import", node, f"from {'.' * node.level}{module} import is not allowed")
            return
        for a in node.names:
            if a.name == "*":
                self._add("forbidden_import", node, f"from {module} import * is not allowed")
            elif not self._forbidden_name(a.name, node) and not attribute_allowed(module, a.name):
                self._add("forbidden_attribute", node, f"from {module} import {a.name}: {a.name} is not on "
                          f"the allowlist of {module}")
            if (a.asname or "").startswith("__"):
                self._add("forbidden_attribute", node, f"name {a.asname} is not allowed")

    def _name(self, node: ast.Name, parent: ast.AST | None) -> None:
        name = node.id
        if name in self.modules and not (isinstance(parent, ast.Attribute) and parent.value is node):
            self._add("forbidden_attribute", node, f"module {name} used as a value: only its attributes may "
                      "be read (aliases would escape the allowlist, #18)")
        elif isinstance(node.ctx, ast.Load) and name in self.classes and not (
                class_use_allowed(node, parent) or id(node) in self.annotations):
            # an alias of the class (A = C, C if x else C, [C][0]) reads its methods as plain
            # functions, called with any object as self: self.x = v then sets x on that object
            self._add("forbidden_attribute", node, f"class {name} used as a value: only call it, read its "
                      "attributes or name it as a base (an alias calls its methods with any object as self, #18)")
        elif isinstance(node.ctx, ast.Load) and name in self.class_functions and self.where.get(id(node)) == "class":
            self._add("forbidden_attribute", node, f"method {name} used as a value in its class body: there it "
                      "is a plain function, callable with any object as self (#18)")
        elif name in FORBIDDEN_DUNDER_NAMES:
            self._add("forbidden_call", node, f"use of {name} is not allowed")
        elif name.startswith("__") and name not in ALLOWED_DUNDERS:
            self._add("forbidden_attribute", node, f"name {name} is not allowed")
        elif name in INTERPRETER_NAMES and self.where.get(id(node)) in ("module", "fallthrough"):
            # at module level: the interpreter's own {name} is put there, and a module-level call
            # can run before the candidate's binding is made
            self._add("forbidden_call", node, f"module-level name {name}: Triton's CPU interpreter puts a {name} "
                      "of its own in a kernel's module; use another name there (#18)")
        elif name in BUILTIN_NAMES and name not in ALLOWED_BUILTINS and self.where.get(id(node)) not in (
                "local", "enclosing", "function"):
            # a parameter or local of a function shadows the builtin; a class body's or the
            # module's binding can be read before it is made, and then the read is the builtin
            self._add("forbidden_call", node, f"use of {name} is not allowed")
        elif isinstance(node.ctx, ast.Load) and self.where.get(id(node), "fallthrough") == "fallthrough" and (
                name not in BUILTIN_NAMES):
            # Triton's CPU interpreter copies its own module globals into a kernel's module on the
            # first launch, wherever the module lacks the name: a read that may find no binding of
            # the candidate's finds one of those (static_scopes.py)
            self._add("forbidden_call", node, f"name {name} is not surely bound where it is read: a name must "
                      "be a local, a parameter, or bound by an unconditional top-level statement of the module "
                      "(of the class body, before the read) (#18)")

    def _forbidden_name(self, attr: str, node: ast.AST) -> bool:
        """The rules that hold on every object; True if one fired."""
        if attr.startswith("__") and attr.endswith("__") and attr not in ALLOWED_DUNDERS:
            self._add("forbidden_attribute", node, f"dunder attribute {attr} is not allowed")
        elif attr in FORBIDDEN_ATTRIBUTES:
            self._add("forbidden_call", node, f"{attr}: {FORBIDDEN_ATTRIBUTES[attr]}")
        elif attr.startswith(FORBIDDEN_ATTRIBUTE_PREFIXES):
            self._add("forbidden_attribute", node, f"{attr}: frame or code object attribute")
        else:
            return False
        return True

    def _attribute(self, node: ast.Attribute, parent: ast.AST | None) -> None:
        attr, text = node.attr, dotted(node)
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            root = chain_root(node)
            if isinstance(root, ast.Name) and root.id in self.modules:
                self._add("forbidden_attribute", node, f"assigning to {text} patches a module (#6)")
            elif not self._is_self(root):
                self._add("forbidden_attribute", node, f"assigning to {text}: only attributes of self (a "
                          "method's first parameter, never rebound) may be assigned (#6)")
            elif node.value is not root:
                self._add("forbidden_attribute", node, f"assigning to {text}: only self's own attributes may be "
                          "assigned, not an attribute of what self holds (a tensor the judge reads, #6)")
        if self._forbidden_name(attr, node):
            return
        if self._is_class(node.value) and attr in self.methods:
            self._add("forbidden_attribute", node, f"{text}: a method read on its class binds self to any "
                      "object it is called with; call it on an instance (#18)")
            return
        if attr in self.classes and isinstance(node.ctx, ast.Load) and not (
                class_use_allowed(node, parent) or id(node) in self.annotations):
            self._add("forbidden_attribute", node, f"class {text} used as a value: only call it, read its "
                      "attributes or name it as a base (an alias calls its methods with any object as self, #18)")
            return
        module = self.module_of(node.value)
        if module is not None:
            if module == "torch" and attr == "load":
                self._add("forbidden_call", node, "torch.load reads files (#7)")
            elif attr.startswith("_"):
                self._add("forbidden_attribute", node, f"private attribute {text}")
            elif not attribute_allowed(module, attr):
                self._add("forbidden_attribute", node, f"{text}: {attr} is not on the allowlist of {module}")
            elif is_module(f"{module}.{attr}") and not isinstance(parent, ast.Attribute):
                self._add("forbidden_attribute", node, f"module {text} used as a value: only its attributes "
                          "may be read (aliases would escape the allowlist, #18)")
        elif attr in ("format", "format_map"):
            value = node.value
            if attr == "format_map" or not (isinstance(value, ast.Constant) and isinstance(value.value, str)
                                            and format_fields_safe(value.value)):
                self._add("forbidden_attribute", node, f"{attr} reads attributes by name: only a literal "
                          "'...'.format whose fields have no '.' or '[' is allowed (#18)")
        elif attr in ALLOWED_DUNDERS or attr in OBJECT_ATTRIBUTES:
            return
        else:
            on_self = self._is_self(node.value)
            defined = on_self and (attr in self.on_self or attr in self.in_classes)
            own = isinstance(node.value, ast.Name) and node.value.id in self.instances
            if attr.startswith("_") and not defined:
                self._add("forbidden_attribute", node, f"private attribute {text}: only self._x that the "
                          "candidate defines may be read")
            elif not defined and attr in self.in_classes and attr in FOREIGN_ATTRIBUTES and not own:
                self._add("forbidden_attribute", node, f"{text}: {attr} is also an attribute of kernels, "
                          "tensors, modules or builtin objects; a name a class of yours defines is readable "
                          "there on a method's self, or on a name bound only to an instance of your class (#18)")
            elif not defined and not (attr in self.in_classes and self._candidate_object(node.value)):
                self._add("forbidden_attribute", node, f"{text}: attribute {attr} is not on the allowlist "
                          "(nor defined by the candidate on its own objects)")

    def _is_class(self, node: ast.AST) -> bool:
        """Whether ``node`` reads one of the source's classes: its name, or a class nested in
        another read as an attribute (``Outer.Inner``, ``obj.Inner``)."""
        return (isinstance(node, ast.Name) and node.id in self.classes
                or isinstance(node, ast.Attribute) and node.attr in self.classes)

    def _is_self(self, node: ast.AST) -> bool:
        """Whether ``node`` is ``self`` as a method's first parameter, never rebound: only then is
        it an instance of the candidate's class (a plain function's ``self`` is any object)."""
        if not (isinstance(node, ast.Name) and node.id == "self"):
            return False
        scope = self.binder.get(id(node))
        return scope is not None and scope.self_name == "self" and scope.binds["self"] == 1

    def _candidate_object(self, value: ast.AST) -> bool:
        """Whether ``value`` may carry a name the candidate's class bodies define: any value but a
        function the source defines (its kernels and helpers), a subscript or a call's result.
        Those are the objects whose other attributes lead out of the allowlist: a class-body name
        would otherwise open that attribute on them (``kernel.get_capture_scope`` after
        ``get_capture_scope = None``). Instances of its own classes (``config.block_m``) keep
        their fields."""
        if isinstance(value, (ast.Subscript, ast.Call)):
            return False
        return not (isinstance(value, ast.Name) and value.id in self.functions)


__all__ = ["Checker", "Finding"]
