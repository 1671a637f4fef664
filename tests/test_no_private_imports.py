"""No module takes another module's private names.

Every ``.py`` under ``PACKAGES`` is parsed with ``ast`` (nothing is imported) and each of these
is a crossing when ``target`` is another project module than the file's own:

* ``from target import _name`` (relative imports resolved against the file's package);
* ``target._name``, where ``target`` is a name bound in the file to a project module
  (``import a.b``, ``import a.b as m``, ``from a import b``) or a dotted chain of submodules below
  one (``hawkeye_env.judge.parent.launch.run_job._watch``);
* ``import a._b`` or ``from a import _b`` of a private submodule ``_b`` from outside package ``a``.

A module using its own private names is fine. Dunder names (``__file__``, ``__version__``,
``from __future__ import annotations``) and third-party modules (``torch._C``,
``triton.runtime._x``) are out of scope. Bindings are read per file, not per scope: a name bound
to a module anywhere in the file counts everywhere in it. Access by string (``getattr(m, "_x")``,
``importlib``) is not read.

``find_private_crossings`` is the whole check; the test runs it over the repo and over a planted
tree in a temporary folder, so it is seen to fail.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("hawkeye_env", "evals", "training", "policies", "reward", "units", "bench")
SKIPPED_DIRS = ("bench/results",)

_METADATA = "Triton compiled-kernel metadata of a unit's JIT kernel, which has no public handle"
# (importer, target module, private name) -> why it stays. A key that no longer occurs fails the
# test too, so the list cannot outlive its reasons.
ALLOWED: dict[tuple[str, str, str], str] = {
    # The kernel sweeps read registers, spills and shared memory from the compiled metadata of a
    # unit's kernel; every unit names its kernels ``_<op>_kernel`` behind a public launcher, and a
    # public handle per unit is a change to the unit format (sweep harness).
    ("bench.kerneldev.sweeps.fp4", "units.block_scaled_fp4", "_fp4_gemm_kernel"): _METADATA,
    ("units.lib.triton_compile", "units.block_scaled_fp4", "_fp4_gemm_kernel"):
        "the sm_90 cross-compile of the FP4 kernel's main loop needs the JIT function itself",
    ("bench.kerneldev.sweeps.fp8", "units.fp8_scaled_gemm.kernel", "_fp8_gemm_kernel"): _METADATA,
    ("bench.kerneldev.sweeps.ws", "units.warp_specialization.kernel", "_persistent_ws_matmul_kernel"): _METADATA,
    ("bench.kerneldev.sweeps.ws", "units.warp_specialization.kernel", "_ws_matmul_kernel"): _METADATA,
}


class Crossing(NamedTuple):
    """One private name read across a module boundary: ``importer`` (dotted) reads ``name`` of
    ``target`` (dotted) at ``line`` (1-based)."""

    importer: str
    target: str
    name: str
    line: int

    @property
    def key(self) -> tuple[str, str, str]:
        return self.importer, self.target, self.name


def module_files(root: Path, packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    """Every module under ``root/<package>`` by dotted name (``pkg/__init__.py`` is ``pkg``)."""
    modules = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root)
            if any(rel.is_relative_to(skipped) for skipped in SKIPPED_DIRS):
                continue
            parts = list(rel.with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The module a ``from`` import names, relative levels resolved against ``module``."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _private_submodule_crossing(importer: str, dotted: str) -> str | None:
    """The private component of ``dotted`` (a module path) that ``importer`` reaches from outside
    its package, else None."""
    parts = dotted.split(".")
    for i, part in enumerate(parts):
        if _is_private(part) and not _inside(importer, ".".join(parts[:i])):
            return part
    return None


def crossings_in(module: str, path: Path, known: set[str]) -> list[Crossing]:
    """Every private name ``module`` (read from ``path``) takes from another module in ``known``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    roots = {name.split(".")[0] for name in known}
    found: list[Crossing] = []
    bound: dict[str, str] = {}  # local name -> project module it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] not in roots:
                    continue
                private = _private_submodule_crossing(module, alias.name)
                if private:
                    found.append(Crossing(module, alias.name.rsplit(".", 1)[0], private, node.lineno))
                if alias.asname:
                    bound[alias.asname] = alias.name
                else:
                    bound[alias.name.split(".")[0]] = alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(module, is_package, node)
            if source.split(".")[0] not in roots:
                continue
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                if submodule in known:
                    bound[alias.asname or alias.name] = submodule
                    private = _private_submodule_crossing(module, submodule)
                    if private:
                        found.append(Crossing(module, source, private, node.lineno))
                elif _is_private(alias.name) and source != module:
                    found.append(Crossing(module, source, alias.name, node.lineno))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or not _is_private(node.attr):
            continue
        chain, value = [], node.value
        while isinstance(value, ast.Attribute):
            chain.append(value.attr)
            value = value.value
        if not isinstance(value, ast.Name) or value.id not in bound:
            continue
        target = ".".join([bound[value.id], *reversed(chain)])
        if target in known and target != module:
            found.append(Crossing(module, target, node.attr, node.lineno))
    return found


def find_private_crossings(root: Path, packages: tuple[str, ...] = PACKAGES) -> list[Crossing]:
    """Every private-name crossing in the modules under ``root/<package>``, sorted."""
    modules = module_files(root, packages)
    known = set(modules)
    return sorted(c for module, path in modules.items() for c in crossings_in(module, path, known))


def report(found: list[Crossing], allowed: dict[tuple[str, str, str], str]) -> str:
    """Crossings not in ``allowed`` and ``allowed`` entries that no longer occur, one per line."""
    keys = {c.key for c in found}
    new = [f"{c.importer} line {c.line}: {c.target}.{c.name}" for c in found if c.key not in allowed]
    stale = [f"allowlisted but gone: {key}" for key in allowed if key not in keys]
    return "\n".join(new + stale)


def test_no_module_reads_another_modules_private_names():
    found = find_private_crossings(REPO)
    problems = report(found, ALLOWED)
    assert not problems, "private names taken across a module boundary (importer: module.name):\n" + problems


def test_the_check_finds_planted_crossings_and_spares_own_names(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    for init in (pkg / "__init__.py", pkg / "sub" / "__init__.py"):
        init.write_text("")
    (pkg / "_hidden.py").write_text("x = 1\n")
    (pkg / "lib.py").write_text("_secret = 1\n__version__ = '1'\ndef public(): return _secret\n")
    (pkg / "sub" / "user.py").write_text(
        "from __future__ import annotations\n"
        "import torch\n"
        "import pkg.lib\n"
        "from pkg import lib as L\n"
        "from pkg.lib import _secret, public, __version__\n"
        "from ..lib import _secret as again\n"
        "a = L._secret\n"
        "b = pkg.lib._secret\n"
        "c = torch._C\n"
        "d = L.__file__\n"
        "from pkg import _hidden\n"
    )
    # a module's own private names, and a private submodule used inside its package, are fine
    (pkg / "own.py").write_text("_mine = 1\nimport pkg.own as me\nx = me._mine\nfrom pkg import _hidden\n")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "use.py").write_text("def f():\n    from pkg import _hidden\n    import pkg._hidden\n")
    found = find_private_crossings(tmp_path, ("pkg", "other"))
    assert [(c.importer, c.target, c.name, c.line) for c in found] == [
        ("other.use", "pkg", "_hidden", 2),
        ("other.use", "pkg", "_hidden", 3),
        ("pkg.sub.user", "pkg.lib", "_secret", 5),
        ("pkg.sub.user", "pkg.lib", "_secret", 6),
        ("pkg.sub.user", "pkg.lib", "_secret", 7),
        ("pkg.sub.user", "pkg.lib", "_secret", 8),
    ]
    assert "pkg.sub.user line 7: pkg.lib._secret" in report(found, {})
    allowed = {("pkg.sub.user", "pkg.lib", "_secret"): "why", ("other.use", "pkg", "_hidden"): "why"}
    assert report(found, allowed) == ""
    assert report([], allowed).count("allowlisted but gone") == 2
