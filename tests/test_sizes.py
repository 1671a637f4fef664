"""Files within about 400 lines and functions within about 60.

Every ``.py`` under ``PACKAGES`` is parsed with ``ast``: a module may hold at most
``MAX_MODULE_LINES`` lines, a function at most ``MAX_FUNCTION_LINES`` lines of code (its
docstring not counted, nested functions counted in their parent too). ``ALLOWED`` names the
exceptions with their reasons; an entry that is no longer over its limit fails the test too, so
the list cannot outlive its reasons. ``oversized`` is the whole check; the test runs it over the
repo and over a planted tree, so it is seen to fail.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("hawkeye_env", "evals", "training", "policies", "reward", "units", "bench")
SKIPPED_DIRS = ("bench/results",)
MAX_MODULE_LINES = 420
MAX_FUNCTION_LINES = 60

_KERNEL = ("a kernel's main loop: splitting it into jit helpers must be checked for identical machine code "
           "on the GPU's Triton, as block_scaled_fp4's split was")
# "path::function" -> why it stays longer
ALLOWED: dict[str, str] = {
    "units/fp8_scaled_gemm/kernel.py::_fp8_gemm_kernel": _KERNEL,
    "units/ws_persistent_gemm/kernel.py::_consumer": _KERNEL + " (a Gluon warp-specialized partition)",
}


def code_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines from the function's first statement after its docstring to its end."""
    body = node.body
    first = body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        if len(body) == 1:
            return 1
        first = body[1]
    return node.end_lineno - first.lineno + 1


def oversized(root: Path, packages=PACKAGES) -> dict[str, int]:
    """``"path"`` (modules) or ``"path::function"`` -> its line count, for every one over its limit."""
    found = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if any(rel.startswith(d + "/") for d in SKIPPED_DIRS):
                continue
            text = path.read_text(encoding="utf-8")
            lines = text.count("\n") + (not text.endswith("\n"))
            if lines > MAX_MODULE_LINES:
                found[rel] = lines
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and code_lines(node) > MAX_FUNCTION_LINES:
                    found[f"{rel}::{node.name}"] = code_lines(node)
    return found


def test_no_module_or_function_is_over_its_limit_but_the_allowed():
    found = oversized(REPO)
    assert set(found) - set(ALLOWED) == set(), {k: v for k, v in found.items() if k not in ALLOWED}
    assert set(ALLOWED) - set(found) == set(), "no longer over the limit: remove from ALLOWED"


def test_the_check_finds_a_planted_long_function_and_module(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES + 1))
    (pkg / "long.py").write_text('def f():\n    """Doc."""\n' + body + "\n" * MAX_MODULE_LINES)
    (pkg / "short.py").write_text('def g():\n    """' + "doc\n" * 100 + '"""\n    return 1\n')
    found = oversized(tmp_path, ("pkg",))
    assert found == {"pkg/long.py": MAX_MODULE_LINES + MAX_FUNCTION_LINES + 3,
                     "pkg/long.py::f": MAX_FUNCTION_LINES + 1}
