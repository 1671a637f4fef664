"""Static checks on candidate source, run in the trusted parent without importing it.

Each rule names the reward hack it blocks (numbers refer to REWARD_HACKS.md). The rules are an
allowlist where that is possible (imports) and a denylist of escape hatches otherwise (builtins
that patch, introspect or execute strings; dunder and private attributes; module state). Run-time
guards in the worker (``guards.py``) back every rule up, so a rule that misses a spelling is not
the only line of defence.

Covered: imports outside the allowlist (#4 threads/processes, #6 patching via sys/inspect/gc,
#8 host-side numpy fallbacks), string execution and reflection builtins (#6), dunder and private
attributes of modules (#6), assignment to attributes of imported modules (#6), ``global`` and
``nonlocal`` (#7 caches across calls), timer/stream/graph/compile APIs (#3, #6, #8), precision
flags (#10) and host copies of tensors (#8).
Not covered statically (left to run-time guards): torch compute ops (#8, the op recorder), decoy
kernels (#9, the launch counter), input mutation (#2), lazy outputs (#5), caches keyed on
pointers (#7, fresh inputs), impossible timings (#15, roofline floor).
"""

from __future__ import annotations

import ast
import threading
from dataclasses import dataclass

ALLOWED_IMPORTS: frozenset[str] = frozenset(
    {
        "torch", "torch.nn", "torch.nn.functional", "triton", "triton.language",
        "triton.language.extra", "triton.language.extra.libdevice", "triton.language.extra.cuda",
        "triton.tools.tensor_descriptor", "math", "typing", "__future__", "dataclasses", "units",
    }
)
ALLOWED_IMPORT_PREFIXES: tuple[str, ...] = ("units.",)

FORBIDDEN_BUILTINS: frozenset[str] = frozenset(
    {
        "eval", "exec", "compile", "__import__", "open", "globals", "locals", "vars", "getattr",
        "setattr", "delattr", "breakpoint", "input", "exit", "quit", "memoryview", "help",
        "__builtins__", "__loader__", "__spec__",
    }
)

# Attribute names that reach timers, streams, graphs, compilers, precision flags, host copies or
# raw pointers, whatever object they are read from.
FORBIDDEN_ATTRIBUTES: dict[str, str] = {
    **{a: "timer or synchronisation API (#3, #6)" for a in (
        "Event", "elapsed_time", "synchronize", "perf_counter", "cudart")},
    **{a: "stream or graph API: work could escape the timed stream (#3)" for a in (
        "Stream", "stream", "set_stream", "current_stream", "default_stream", "ExternalStream",
        "CUDAGraph", "graph", "graphs", "make_graphed_callables")},
    **{a: "compiler or library fallback (#8)" for a in (
        "compile", "jit_script", "script", "trace", "library", "ops", "cpp_extension",
        "load_inline", "hub", "utils", "backends", "inductor", "export")},
    **{a: "changes numeric precision flags (#10)" for a in (
        "set_float32_matmul_precision", "allow_tf32", "allow_bf16_reduced_precision_reduction",
        "allow_fp16_reduced_precision_reduction", "set_default_dtype", "use_deterministic_algorithms")},
    **{a: "host copy or raw pointer of a tensor (#7, #8)" for a in (
        "numpy", "tolist", "from_numpy", "frombuffer", "data_ptr", "untyped_storage", "storage",
        "set_allocator_settings", "memory", "caching_allocator_alloc")},
    **{a: "patches or inspects the judge (#6)" for a in (
        "runtime", "compiler", "testing", "knobs", "set_per_process_memory_fraction",
        "manual_seed", "seed", "get_rng_state", "set_rng_state", "modules")},
    # torch re-exports stdlib modules as attributes (torch.sys, torch.os, ...): the import
    # allowlist alone would let ``torch.sys.modules`` reach the judge's own modules.
    **{a: "stdlib module reached through an attribute (#4, #6)" for a in (
        "sys", "os", "threading", "ctypes", "inspect", "importlib", "builtins", "subprocess",
        "multiprocessing", "gc", "signal", "socket", "shutil", "pickle", "io", "pathlib", "types",
        "weakref", "atexit", "functools", "concurrent", "asyncio", "platform", "tempfile",
        "distributed", "package", "serialization", "save", "from_file")},
}
# Frame, code and traceback attributes reach the globals of any function on the stack (#6).
FORBIDDEN_ATTRIBUTE_PREFIXES: tuple[str, ...] = ("f_", "gi_", "cr_", "ag_", "tb_", "co_")
# Names that are fine on Triton's ``tl`` but not on torch (``torch.load`` reads files: #7).
FORBIDDEN_TORCH_ATTRIBUTES: frozenset[str] = frozenset({"load"})

ALLOWED_DUNDERS: frozenset[str] = frozenset({"__init__", "__name__"})


@dataclass(frozen=True)
class Finding:
    """One static violation: ``code`` is a ``VIOLATION_CODES`` key; ``line`` is 1-based."""

    code: str
    line: int
    message: str


class _Checker(ast.NodeVisitor):
    def __init__(self) -> None:
        self.findings: list[Finding] = []
        self.module_aliases: set[str] = set()
        self.torch_aliases: set[str] = set()

    def _add(self, code: str, node: ast.AST, message: str) -> None:
        self.findings.append(Finding(code, getattr(node, "lineno", 0), message))

    @staticmethod
    def _allowed(module: str) -> bool:
        return module in ALLOWED_IMPORTS or module.startswith(ALLOWED_IMPORT_PREFIXES)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if not self._allowed(alias.name):
                self._add("forbidden_import", node, f"import {alias.name} is not allowed")
            self.module_aliases.add((alias.asname or alias.name).split(".")[0])
            if alias.name == "torch":
                self.torch_aliases.add(alias.asname or "torch")
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level or not self._allowed(module):
            self._add("forbidden_import", node, f"from {'.' * node.level}{module} import is not allowed")
        for alias in node.names:
            full = f"{module}.{alias.name}"
            if alias.name == "*":
                self._add("forbidden_import", node, f"from {module} import * is not allowed")
            elif self._allowed(full) or module == "__future__":
                self.module_aliases.add(alias.asname or alias.name)
            self._check_attr_name(alias.name, node)
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in FORBIDDEN_BUILTINS:
            self._add("forbidden_call", node, f"use of {node.id} is not allowed")
        elif node.id.startswith("__") and node.id not in ALLOWED_DUNDERS:
            self._add("forbidden_attribute", node, f"name {node.id} is not allowed")
        self.generic_visit(node)

    def _check_attr_name(self, attr: str, node: ast.AST) -> None:
        if attr.startswith("__") and attr.endswith("__") and attr not in ALLOWED_DUNDERS:
            self._add("forbidden_attribute", node, f"dunder attribute {attr} is not allowed")
        elif attr in FORBIDDEN_ATTRIBUTES:
            self._add("forbidden_call", node, f"{attr}: {FORBIDDEN_ATTRIBUTES[attr]}")
        elif attr.startswith(FORBIDDEN_ATTRIBUTE_PREFIXES):
            self._add("forbidden_attribute", node, f"{attr}: frame or code object attribute")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self._check_attr_name(node.attr, node)
        root = node.value
        if node.attr in FORBIDDEN_TORCH_ATTRIBUTES and self._root_name(node) in self.torch_aliases:
            self._add("forbidden_call", node, f"torch.{node.attr} reads files (#7)")
        if (
            isinstance(root, ast.Name)
            and root.id in self.module_aliases
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            self._add("forbidden_attribute", node, f"private attribute {root.id}.{node.attr}")
        if isinstance(node.ctx, (ast.Store, ast.Del)) and self._rooted_in_module(node):
            self._add("forbidden_attribute", node, f"assigning to {ast.unparse(node)} patches a module")
        self.generic_visit(node)

    @staticmethod
    def _root_name(node: ast.AST) -> str | None:
        while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
            node = node.func if isinstance(node, ast.Call) else node.value
        return node.id if isinstance(node, ast.Name) else None

    def _rooted_in_module(self, node: ast.AST) -> bool:
        return self._root_name(node) in self.module_aliases

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        if node.name.startswith("__") and node.name.endswith("__") and node.name not in ALLOWED_DUNDERS:
            self._add("forbidden_attribute", node, f"defining {node.name} is not allowed: it runs outside forward")
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Global(self, node: ast.Global) -> None:
        self._add("global_state", node, f"global {', '.join(node.names)}: module state across calls")

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        self._add("global_state", node, f"nonlocal {', '.join(node.names)}: state across calls")


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
    """All static findings for ``source``; raises ``SyntaxError`` if it does not parse."""
    tree = parse_source(source)
    checker = _Checker()
    checker.visit(tree)
    return sorted(set(checker.findings), key=lambda f: (f.line, f.code, f.message))
