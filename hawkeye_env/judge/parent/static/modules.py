"""Which modules a candidate may import, and which attribute names each of them offers.

The static checker's view of modules (``static_checker.py``): the fixed lists of
``static_allowlist.py`` (``IMPORTABLE``, ``MODULE_ATTRIBUTES``, ``LIBDEVICE_MODULES``), plus the
kernel modules of ``units/``, read from their source with ``ast`` (never imported), with their
public top-level definitions as their attribute list. The units' infrastructure (``units/lib/``:
spec, index, harness, inputs, the compile checks) and a unit's references, metadata and compile
cases are not kernel modules and stay unreachable (#4).
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

from hawkeye_env.judge.parent.static.allowlist import IMPORTABLE, LIBDEVICE_MODULES, LIBDEVICE_NAME, MODULE_ATTRIBUTES

UNITS_ROOT = Path(__file__).resolve().parents[4] / "units"
# Files of a unit that are not kernel modules (references, metadata, the package's exports).
UNIT_NON_KERNEL_FILES = frozenset({"__init__.py", "meta.py", "naive.py", "reference.py", "compile_cases.py"})
# Kernel modules at the top of ``units/`` (shared by several units).
SHARED_UNIT_MODULES = ("block_scaled_fp4.py", "fp4_ptx.py", "gluon_compat.py")


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
def unit_modules() -> dict[str, frozenset[str]]:
    """``units.<unit>.<module>`` kernel modules (and ``SHARED_UNIT_MODULES``) by dotted name, with
    their public names, plus the packages leading to them with their submodules' names."""
    found: dict[str, frozenset[str]] = {}
    # a unit is a folder of units/ with a meta.py (units/lib/, the infrastructure, is none)
    files = [p for p in UNITS_ROOT.glob("*/*.py")
             if (p.parent / "meta.py").is_file() and p.name not in UNIT_NON_KERNEL_FILES]
    files += [UNITS_ROOT / name for name in SHARED_UNIT_MODULES if (UNITS_ROOT / name).is_file()]
    packages: dict[str, set[str]] = {"units": set()}
    for path in sorted(files):
        try:
            names = _top_level_names(path)
        except (OSError, SyntaxError, ValueError):  # an unreadable unit is not importable
            continue
        parts = ["units", *path.relative_to(UNITS_ROOT).with_suffix("").parts]
        found[".".join(parts)] = names
        for i in range(1, len(parts)):
            packages.setdefault(".".join(parts[:i]), set()).add(parts[i])
    return {**{k: frozenset(v) for k, v in packages.items()}, **found}


def module_attributes(path: str) -> frozenset[str] | None:
    """The attribute names allowed on module ``path`` (dotted), or None if ``path`` is not a known
    module or is a libdevice module (whose names follow ``LIBDEVICE_NAME`` instead of a list)."""
    if path in MODULE_ATTRIBUTES:
        return MODULE_ATTRIBUTES[path]
    if path in LIBDEVICE_MODULES:
        return None
    return unit_modules().get(path)


def attribute_allowed(path: str, name: str) -> bool:
    """Whether a candidate may read ``name`` from module ``path``."""
    if path in LIBDEVICE_MODULES:
        return bool(LIBDEVICE_NAME.match(name)) and name != "core"
    allowed = module_attributes(path)
    return allowed is not None and name in allowed


def is_module(path: str) -> bool:
    """Whether ``path`` names a module the checker knows (allowed or not to import)."""
    return path in LIBDEVICE_MODULES or module_attributes(path) is not None


def importable(module: str) -> bool:
    """Whether a candidate may ``import module``: ``IMPORTABLE`` or a unit kernel module."""
    return module in IMPORTABLE or (module.startswith("units.") and module in unit_modules())


__all__ = ["SHARED_UNIT_MODULES", "UNITS_ROOT", "UNIT_NON_KERNEL_FILES", "attribute_allowed", "importable", "is_module",
           "module_attributes", "unit_modules"]
