"""Static checks on candidate source, run in the trusted parent without importing it.

A fast first filter, not the defence: it rejects what no honest Triton candidate writes before a
worker is started. The defence is that nothing the verdict trusts is computed in the candidate's
process (docs/threat-model.md #19-#21: OS sandbox per worker, parent-side validation of every reply),
so a spelling these rules miss must still not forge a verdict. Numbers are docs/threat-model.md's classes.

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
  constants; on any object, as the checker has no types, except the names other objects carry
  too, ``static_foreign.FOREIGN_ATTRIBUTES``, readable on ``self`` and on names bound only to
  instances of the source's classes) and names the source assigns as ``self.x`` (on ``self``
  only). A plain method is never read on its class (``C.f(x)`` binds ``self`` to ``x``). A
  ``_private`` name is allowed only as ``self._x`` that the source defines; dunders only
  ``__init__`` and ``__name__``. ``str.format`` only on a literal whose fields read no attribute or
  index (``"{0.__class__}"``);
- names: every read must find one of the candidate's own bindings by Python's scoping rules
  (``static_scopes.py``: a local, a parameter, an enclosing function's, or an unconditional
  top-level binding made before the read), never fall through to the module's globals and the
  builtins, where Triton's CPU interpreter puts names of its own on a kernel's first launch (those,
  ``INTERPRETER_NAMES``, are refused at module level outright); builtins outside
  ``ALLOWED_BUILTINS`` (``getattr``, ``vars``, ``type``, ``object``, ``eval``, ``open``...) are
  findings unless a function's own local or parameter shadows them (a class body that binds one
  reads the builtin before its binding, whatever the enclosing function binds);
- definitions: no class body and no ``self.x`` defines a builtin's name that reaches code
  (``exec``, ``getattr``...) or a name that kernels, tensors, modules or the CPU interpreter's
  objects carry with code behind it (``static_foreign.CODE_ATTRIBUTES``: ``rewriter``, ``fn``,
  ``cache``...), so no spelling of ``self`` or of an own instance reads a foreign object's code;
  no annotation holds a string (``typing.get_type_hints``, which Triton and Gluon call, evaluates
  it with the builtins), and no mapping key (a subscript, ``.get``, ``.pop``, ``.setdefault``) is
  built from strings at run time;
- text: no coding declaration but UTF-8 (the import would decode other code than the checked
  text), and ``jit`` only as the innermost decorator of a module-level ``def`` (Triton's
  ``autotune``/``heuristics`` alone above it) whose block, as ``inspect`` reads it, is its own
  lines with no other line beginning ``def ``, as Triton's CPU interpreter recompiles a kernel
  from the last such line of that block, at module level (``static_kernels.py``);
- always forbidden, on any object and ahead of the allowlists (their messages name the hack):
  ``FORBIDDEN_ATTRIBUTES`` (#3 streams and events, #8 host copies and ``ops``, #10 precision flags),
  frame/code/generator prefixes, dunder definitions other than ``__init__``, and assignment to any
  attribute not rooted at ``self`` (#6 patching).

Not covered statically (left to run-time guards and the sandbox): torch compute ops (#8, the op
recorder), decoy kernels (#9, the launch counter), input mutation (#2), lazy outputs (#5), caches
keyed on pointers or held in module-level containers (#7, fresh inputs), impossible timings (#15),
a class-body name that unlocks a public name of an object type ``FOREIGN_ATTRIBUTES`` does not
list, and anything reachable through a value an allowed function returns that the lists do not
foresee.

Where the rules live: this module is the entry point (``parse_source``, ``check_source``); the
walk over the tree is ``static_checker.py``, the text's rules ``static_kernels.py``, the lists are
``static_allowlist.py``, and which modules a candidate reaches and what each offers is
``static_modules.py``.
"""

from __future__ import annotations

import ast
import functools
import threading

from hawkeye_env.judge.parent.static.kernel_bodies import kernel_body_findings
from hawkeye_env.judge.parent.static.kernel_text import encoding_findings, jit_defs, kernel_findings
from hawkeye_env.judge.parent.static.walker import Checker, Finding

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


def fast_filter(tree: ast.Module) -> list[Finding]:
    """The candidate's source before any worker starts: a finding only for what is certainly not
    a kernel solution, a source that names neither Triton nor a unit (its forward can launch no
    kernel). Host code is otherwise free Python: it runs in the OS sandbox, and what a verdict
    reads comes from the trusted replay of the kernels it launched, never from its process."""
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    modules = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    modules |= {(n.module or "").split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    if modules & {"triton", "units"} or names & {"triton", "tl"}:
        return []
    return [Finding("no_kernel_launch", 1, "the source imports neither triton nor a unit, so its forward can "
                    "launch no kernel: a candidate runs the task's work in Triton kernels")]


@functools.lru_cache(maxsize=4096)
def _kernel_module_findings(source: str) -> tuple[Finding, ...]:
    return tuple(check_source(source))


def check_kernel_module(source: str) -> list[Finding]:
    """The static rules on a module of kernels the judge wrote from a CPU plan's entries
    (``source_kernels.kernel_module_text``): every rule of ``check_source``, so a kernel body the
    replay rebuilds is held to what a kernel in a candidate's file is. The findings are a function
    of the text alone, so they are kept per text (a batch's candidates share their kernels: the
    rules cost about 0.1 s of the parent's CPU a module)."""
    return list(_kernel_module_findings(source))


def check_source(source: str) -> list[Finding]:
    """All static findings for ``source``; raises ``SyntaxError`` if it does not parse. Never raises
    for a source that parses, however deep its tree: a failure of the checker itself is a finding
    (#23), so one candidate cannot lose the batch."""
    tree = parse_source(source)
    try:
        checker = Checker(tree)
        findings = checker.run() + encoding_findings(source) + kernel_findings(tree, source, checker.module_of)
        findings += kernel_body_findings(tree, jit_defs(tree, checker.module_of), checker.where, checker.module_of)
    except Exception as exc:  # noqa: BLE001 - the error boundary of one candidate
        findings = [Finding("forbidden_call", 0, f"the static checker failed on this source "
                            f"({type(exc).__name__}); rejected rather than trusted (#23)")]
    return sorted(set(findings), key=lambda f: (f.line, f.code, f.message))


__all__ = ["check_kernel_module", "check_source", "fast_filter", "parse_source"]
