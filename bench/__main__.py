"""The front door of the developer tools: ``python -m bench`` lists every runner under ``bench/``
(its ``python -m`` name and the first line of its docstring); ``python -m bench NAME [ARGS...]``
runs one (``NAME`` as listed, e.g. ``calibrate`` or ``kerneldev.sweeps.gemm``).

A runner is a module of this folder with a ``__main__`` guard; table renderers, helpers and the
BENCHMARKS.md generator's pieces are not runners (``benchmarks_doc`` is: it writes BENCHMARKS.md).
"""

from __future__ import annotations

import ast
import runpy
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def runners() -> dict[str, str]:
    """``{dotted name under bench: first docstring line}`` for every module with a ``__main__`` guard."""
    found = {}
    for path in sorted(HERE.rglob("*.py")):
        if path.name.startswith("__") or "results" in path.relative_to(HERE).parts:
            continue
        text = path.read_text(encoding="utf-8")
        if 'if __name__ == "__main__"' not in text:
            continue
        doc = ast.get_docstring(ast.parse(text)) or ""
        name = ".".join(path.relative_to(HERE).with_suffix("").parts)
        found[name] = doc.strip().splitlines()[0] if doc.strip() else ""
    return found


def main(argv: list[str]) -> int:
    table = runners()
    if not argv or argv[0] in ("-h", "--help"):
        width = max(map(len, table))
        print("python -m bench NAME [ARGS...]   (each runner's own --help gives its arguments)\n")
        for name, line in table.items():
            print(f"  {name:{width}s}  {line}")
        return 0
    name = argv[0]
    if name not in table:
        print(f"unknown runner {name!r}; `python -m bench` lists them", file=sys.stderr)
        return 2
    sys.argv = [f"bench.{name}", *argv[1:]]
    runpy.run_module(f"bench.{name}", run_name="__main__", alter_sys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
