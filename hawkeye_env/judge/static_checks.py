"""Static checks on candidate source, run in the trusted parent without importing it.

A fast first filter, not the defence: it rejects what no honest Triton candidate writes before a
worker is started. The defence is that nothing the verdict trusts is computed in the candidate's
process (REWARD_HACKS.md #19-#21: OS sandbox per worker, parent-side validation of every reply),
so a spelling these rules miss must still not forge a verdict. Numbers refer to REWARD_HACKS.md.

The rules are allowlists (#18), applied to every node whatever object it is read from, so binding
a module to another name changes nothing:

- syntax: only the node types in ``ALLOWED_NODES`` (imports, functions, classes, assignments,
  control flow, ``try``/``with``, comprehensions, lambdas, f-strings, arithmetic, calls,
  subscripts). ``match`` (class patterns read attributes with no ``ast.Attribute``), walrus,
  ``yield``, ``async``, ``except*`` and class keywords (``metaclass=``) are findings; so are
  ``global``/``nonlocal`` (#7) and trees nested deeper than ``MAX_AST_DEPTH`` (#23: the walk is
  iterative and never raises, whatever the depth);
- imports: the modules in ``IMPORTABLE`` and the kernel modules of ``units/`` (#4, #6, #8); a
  ``from M import n`` name must be on ``M``'s attribute allowlist;
- module attributes: a name read from a module must be on that module's list in
  ``MODULE_ATTRIBUTES`` (``torch``, ``torch.nn``, ``torch.nn.functional``, ``torch.cuda``,
  ``triton``, ``triton.language`` and its ``libdevice``, ``math``, ``typing``, ``dataclasses``,
  the public top-level definitions of each unit module). Submodules the lists do not name
  (``torch.sys``, ``F.np``, ``dataclasses.builtins``, ``typing.sys``...) are unreachable, and a
  module may only be the base of an attribute read, never a value (``t = torch``, ``[torch][0]``,
  ``f(torch)``, default arguments);
- other attributes (tensors, dtypes, descriptors, containers, the candidate's own objects): the
  names in ``OBJECT_ATTRIBUTES``, names a class body of the source defines (fields, methods,
  constants; on any object, as the checker has no types) and names the source assigns as
  ``self.x`` (on ``self`` only). A ``_private`` name is allowed only as ``self._x`` that the source
  defines; dunders only ``__init__`` and ``__name__``. ``str.format`` only on a literal whose
  fields read no attribute or index (``"{0.__class__}"``);
- names: builtins outside ``ALLOWED_BUILTINS`` (``getattr``, ``vars``, ``type``, ``object``,
  ``eval``, ``open``...) are findings unless the name is a parameter of an enclosing function;
- always forbidden, on any object and ahead of the allowlists (their messages name the hack):
  ``FORBIDDEN_ATTRIBUTES`` (#3 streams and events, #8 host copies and ``ops``, #10 precision flags),
  frame/code/generator prefixes, dunder definitions other than ``__init__``, and assignment to any
  attribute not rooted at ``self`` (#6 patching).

Not covered statically (left to run-time guards and the sandbox): torch compute ops (#8, the op
recorder), decoy kernels (#9, the launch counter), input mutation (#2), lazy outputs (#5), caches
keyed on pointers or held in module-level containers (#7, fresh inputs), impossible timings (#15),
a method whose ``self`` is bound to a foreign object by an explicit call (``C.f(torch.Tensor)``),
a class-body name that unlocks the same public name on a foreign object (the always-forbidden
names cover those known to reach host copies, pointers, frames or host callbacks), and anything
reachable through a value an allowed function returns that the lists do not foresee.
"""

from __future__ import annotations

import ast
import string
import threading
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from hawkeye_env.judge.static_allowlist import (  # noqa: F401 - re-exported: part of the rules' API
    ALLOWED_BUILTINS,
    ALLOWED_DUNDERS,
    ALLOWED_NODES,
    BUILTIN_NAMES,
    FORBIDDEN_ATTRIBUTE_PREFIXES,
    FORBIDDEN_ATTRIBUTES,
    FORBIDDEN_DUNDER_NAMES,
    IMPORTABLE,
    LIBDEVICE_MODULES,
    LIBDEVICE_NAME,
    MAX_AST_DEPTH,
    MODULE_ATTRIBUTES,
    OBJECT_ATTRIBUTES,
)


@dataclass(frozen=True)
class Finding:
    """One static violation: ``code`` is a ``VIOLATION_CODES`` key; ``line`` is 1-based."""

    code: str
    line: int
    message: str


_UNITS_ROOT = Path(__file__).resolve().parents[2] / "units"
# Files of a unit that are not kernel modules (references, metadata, the package's exports).
_UNIT_NON_KERNEL_FILES = frozenset({"__init__.py", "meta.py", "naive.py", "reference.py", "compile_cases.py"})


def _top_level_names(path: Path) -> frozenset[str]:
    """Public names a trusted unit module defines by ``def``, ``class`` or assignment (not imports)."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return frozenset(n for n in names if not n.startswith("_"))


@cache
def _unit_modules() -> dict[str, frozenset[str]]:
    """``units.<unit>.<module>`` kernel modules (and ``units.block_scaled_fp4``, ``units.gluon_compat``)
    with their public names, plus the packages leading to them; harness, index, inputs, spec, the
    Gluon compile helpers and each unit's compile cases stay out (#4)."""
    found: dict[str, frozenset[str]] = {}
    files = [p for p in _UNITS_ROOT.glob("*/*.py") if p.name not in _UNIT_NON_KERNEL_FILES]
    files += [p for p in [_UNITS_ROOT / "block_scaled_fp4.py", _UNITS_ROOT / "gluon_compat.py"] if p.is_file()]
    packages: dict[str, set[str]] = {"units": set()}
    for path in sorted(files):
        try:
            names = _top_level_names(path)
        except (OSError, SyntaxError, ValueError):  # an unreadable unit is not importable
            continue
        parts = ["units", *path.relative_to(_UNITS_ROOT).with_suffix("").parts]
        found[".".join(parts)] = names
        for i in range(1, len(parts)):
            packages.setdefault(".".join(parts[:i]), set()).add(parts[i])
    return {**{k: frozenset(v) for k, v in packages.items()}, **found}


def _module_attributes(path: str) -> frozenset[str] | None:
    """The attribute names allowed on module ``path``, or None if ``path`` is not a known module."""
    if path in MODULE_ATTRIBUTES:
        return MODULE_ATTRIBUTES[path]
    if path in LIBDEVICE_MODULES:
        return None
    return _unit_modules().get(path)


def _attribute_allowed_on_module(path: str, name: str) -> bool:
    if path in LIBDEVICE_MODULES:
        return bool(LIBDEVICE_NAME.match(name)) and name != "core"
    allowed = _module_attributes(path)
    return allowed is not None and name in allowed


def _is_module(path: str) -> bool:
    return path in LIBDEVICE_MODULES or _module_attributes(path) is not None


def _importable(module: str) -> bool:
    return module in IMPORTABLE or (module.startswith("units.") and module in _unit_modules())


def _format_fields_safe(text: str) -> bool:
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


def _dotted(node: ast.AST) -> str:
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


def _chain_root(node: ast.AST) -> ast.AST:
    for _ in range(MAX_AST_DEPTH):
        if not isinstance(node, (ast.Attribute, ast.Subscript)):
            break
        node = node.value
    return node


class _Checker:
    """One pass over a parsed module; ``run`` never raises for a parsed tree."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.findings: list[Finding] = []
        self.modules: dict[str, str] = {}  # local name -> module path
        self.on_self: set[str] = set()  # attribute names the source assigns as self.x
        self.in_classes: set[str] = set()  # names the source's class bodies define
        self.line = 0  # line of the nearest node that has one (match_case, arguments... have none)

    def _add(self, code: str, node: ast.AST, message: str) -> None:
        self.findings.append(Finding(code, getattr(node, "lineno", self.line), message))

    def _collect(self) -> None:
        """Module aliases and defined attribute names, read before the checks (order-free)."""
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    local, path = (a.asname, a.name) if a.asname else (a.name.split(".")[0], a.name.split(".")[0])
                    if _is_module(path):
                        self.modules[local] = path
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for a in node.names:
                    if _is_module(f"{node.module}.{a.name}"):
                        self.modules[a.asname or a.name] = f"{node.module}.{a.name}"
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                root = _chain_root(node)
                if isinstance(root, ast.Name) and root.id == "self":
                    self.on_self.add(node.attr)
            elif isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.ClassDef)):
                        self.in_classes.add(item.name)
                    elif isinstance(item, (ast.Assign, ast.AnnAssign)):
                        for t in item.targets if isinstance(item, ast.Assign) else [item.target]:
                            if isinstance(t, ast.Name):
                                self.in_classes.add(t.id)

    def _module_of(self, node: ast.AST) -> str | None:
        """The module path ``node`` evaluates to (``F`` -> ``torch.nn.functional``), else None."""
        attrs: list[str] = []
        while isinstance(node, ast.Attribute) and len(attrs) < MAX_AST_DEPTH:
            attrs.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id not in self.modules:
            return None
        path = self.modules[node.id]
        for attr in reversed(attrs):
            if not _is_module(f"{path}.{attr}") or not _attribute_allowed_on_module(path, attr):
                return None
            path = f"{path}.{attr}"
        return path

    def run(self) -> list[Finding]:
        self._collect()
        # (node, parent, depth, parameter names of the enclosing functions, parent's line)
        stack: list[tuple[ast.AST, ast.AST | None, int, frozenset[str], int]] = [(self.tree, None, 1, frozenset(), 0)]
        too_deep = False
        while stack:
            node, parent, depth, params, line = stack.pop()
            self.line = getattr(node, "lineno", line)
            if depth > MAX_AST_DEPTH:
                if not too_deep:
                    too_deep = True
                    self._add("forbidden_call", node, f"the syntax tree nests more than {MAX_AST_DEPTH} levels "
                              "deep: no kernel needs that, and deep trees crash parent-side tools (#23)")
                continue
            self._check(node, parent, params)
            inner = params
            if isinstance(node, (ast.FunctionDef, ast.Lambda)):
                a = node.args
                inner = params | {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg] if x}
            body = node.body if isinstance(node, (ast.FunctionDef, ast.Lambda)) else ()
            body_ids = {id(b) for b in (body if isinstance(body, list) else [body])} if body else set()
            for child in ast.iter_child_nodes(node):
                stack.append((child, node, depth + 1, inner if id(child) in body_ids else params, self.line))
        return self.findings

    def _check(self, node: ast.AST, parent: ast.AST | None, params: frozenset[str]) -> None:
        kind = type(node)
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
            self._name(node, parent, params)
        elif kind is ast.Attribute:
            self._attribute(node, parent)
        elif kind is ast.arg and node.arg.startswith("__"):
            self._add("forbidden_attribute", node, f"name {node.arg} is not allowed")
        elif kind is ast.FunctionDef:
            if node.name.startswith("__") and node.name not in ALLOWED_DUNDERS:
                self._add("forbidden_attribute", node, f"defining {node.name} is not allowed: it runs outside forward")
        elif kind is ast.ClassDef and node.keywords:
            self._add("forbidden_call", node,
                      f"class {node.name}: class keywords (metaclass=...) are not allowed (#18)")
        elif kind is ast.Call and isinstance(node.func, ast.Name) and node.func.id == "super" and (
                node.args or node.keywords):
            self._add("forbidden_call", node, "super() with arguments is not allowed: call it bare (#18)")

    def _import(self, node: ast.Import) -> None:
        for a in node.names:
            if not _importable(a.name):
                self._add("forbidden_import", node, f"import {a.name} is not allowed")
            if (a.asname or "").startswith("__"):
                self._add("forbidden_attribute", node, f"name {a.asname} is not allowed")

    def _import_from(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level or not _importable(module):
            self._add("forbidden_import", node, f"from {'.' * node.level}{module} import is not allowed")
            return
        for a in node.names:
            if a.name == "*":
                self._add("forbidden_import", node, f"from {module} import * is not allowed")
            elif not self._forbidden_name(a.name, node) and not _attribute_allowed_on_module(module, a.name):
                self._add("forbidden_attribute", node, f"from {module} import {a.name}: {a.name} is not on "
                          f"the allowlist of {module}")
            if (a.asname or "").startswith("__"):
                self._add("forbidden_attribute", node, f"name {a.asname} is not allowed")

    def _name(self, node: ast.Name, parent: ast.AST | None, params: frozenset[str]) -> None:
        name = node.id
        if name in self.modules and not (isinstance(parent, ast.Attribute) and parent.value is node):
            self._add("forbidden_attribute", node, f"module {name} used as a value: only its attributes may "
                      "be read (aliases would escape the allowlist, #18)")
        elif name in FORBIDDEN_DUNDER_NAMES:
            self._add("forbidden_call", node, f"use of {name} is not allowed")
        elif name.startswith("__") and name not in ALLOWED_DUNDERS:
            self._add("forbidden_attribute", node, f"name {name} is not allowed")
        elif name in BUILTIN_NAMES and name not in ALLOWED_BUILTINS and name not in params:
            self._add("forbidden_call", node, f"use of {name} is not allowed")

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
        attr, text = node.attr, _dotted(node)
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            root = _chain_root(node)
            if isinstance(root, ast.Name) and root.id in self.modules:
                self._add("forbidden_attribute", node, f"assigning to {text} patches a module (#6)")
            elif not (isinstance(root, ast.Name) and root.id == "self"):
                self._add("forbidden_attribute", node, f"assigning to {text}: only attributes of self may "
                          "be assigned (#6)")
        if self._forbidden_name(attr, node):
            return
        module = self._module_of(node.value)
        if module is not None:
            if module == "torch" and attr == "load":
                self._add("forbidden_call", node, "torch.load reads files (#7)")
            elif attr.startswith("_"):
                self._add("forbidden_attribute", node, f"private attribute {text}")
            elif not _attribute_allowed_on_module(module, attr):
                self._add("forbidden_attribute", node, f"{text}: {attr} is not on the allowlist of {module}")
            elif _is_module(f"{module}.{attr}") and not isinstance(parent, ast.Attribute):
                self._add("forbidden_attribute", node, f"module {text} used as a value: only its attributes "
                          "may be read (aliases would escape the allowlist, #18)")
        elif attr in ("format", "format_map"):
            value = node.value
            if attr == "format_map" or not (isinstance(value, ast.Constant) and isinstance(value.value, str)
                                            and _format_fields_safe(value.value)):
                self._add("forbidden_attribute", node, f"{attr} reads attributes by name: only a literal "
                          "'...'.format whose fields have no '.' or '[' is allowed (#18)")
        elif attr in ALLOWED_DUNDERS or attr in OBJECT_ATTRIBUTES:
            return
        else:
            on_self = isinstance(node.value, ast.Name) and node.value.id == "self"
            defined = on_self and (attr in self.on_self or attr in self.in_classes)
            if attr.startswith("_") and not defined:
                self._add("forbidden_attribute", node, f"private attribute {text}: only self._x that the "
                          "candidate defines may be read")
            elif not defined and attr not in self.in_classes:
                self._add("forbidden_attribute", node, f"{text}: attribute {attr} is not on the allowlist "
                          "(nor defined by the candidate)")


_PARSE_LOCK = threading.Lock()


def parse_source(source: str) -> ast.Module:
    """``ast.parse`` under a process-wide lock. CPython 3.11's parser is not safe to run in two
    threads at once (``SystemError: AST constructor recursion depth mismatch`` was seen when batch
    judging parsed candidates in parallel threads). A source nested too deeply for the parser
    raises ``SyntaxError`` like any other unparsable text."""
    with _PARSE_LOCK:
        try:
            return ast.parse(source)
        except (RecursionError, MemoryError) as exc:
            raise SyntaxError(f"the source nests too deeply to parse ({type(exc).__name__})") from None


def check_source(source: str) -> list[Finding]:
    """All static findings for ``source``; raises ``SyntaxError`` if it does not parse. Never raises
    for a source that parses, however deep its tree: a failure of the checker itself is a finding
    (#23), so one candidate cannot lose the batch."""
    tree = parse_source(source)
    try:
        findings = _Checker(tree).run()
    except Exception as exc:  # noqa: BLE001 - the error boundary of one candidate
        findings = [Finding("forbidden_call", 0, f"the static checker failed on this source "
                            f"({type(exc).__name__}); rejected rather than trusted (#23)")]
    return sorted(set(findings), key=lambda f: (f.line, f.code, f.message))
