"""The trust boundary is the judge's folder tree (``hawkeye_env/judge/__init__.py``): a module's path
says which process runs it, and what it may import follows from that path alone, so a new module is
covered without editing a list.

Two checks. Statically, every import in every module (module level or inside a function) is read
from its syntax tree and held to ``ALLOWED``. Dynamically, each process's entry modules are imported
in a fresh interpreter, as that process imports them, and no module of a side it must not reach may
appear in ``sys.modules``.
"""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import hawkeye_env.judge

JUDGE = Path(hawkeye_env.judge.__file__).parent
PACKAGE = "hawkeye_env.judge"

# folder prefix (dotted, under the judge) -> the folders its modules may import from
ALLOWED: dict[str, tuple[str, ...]] = {
    "shared": ("shared",),
    "parent": ("shared", "parent"),
    "zygote": ("shared", "zygote", "sandboxed.common"),
    "sandboxed.common": ("shared", "sandboxed.common"),
    "sandboxed.candidate": ("shared", "sandboxed.common", "sandboxed.candidate"),
    "sandboxed.replay": ("shared", "sandboxed.common", "sandboxed.replay"),
    "sandboxed.baseline": ("shared", "sandboxed.common", "sandboxed.baseline"),
}


def side_of(module: str) -> str | None:
    """The ``ALLOWED`` key whose folder holds ``module`` (dotted, under the judge), or None."""
    rel = module.removeprefix(PACKAGE + ".")
    keys = [k for k in ALLOWED if rel == k or rel.startswith(k + ".")]
    return max(keys, key=len) if keys else None


def _imports(path: Path, module: str, root: Path) -> set[str]:
    """Every judge module ``path`` imports, at any depth of its syntax tree (absolute names): for
    ``from pkg import name``, ``pkg.name`` when that is a module under ``root``, else ``pkg``."""
    def is_module(name: str) -> bool:
        rel = Path(*name.split(".")[2:])
        return (root / rel).with_suffix(".py").is_file() or (root / rel / "__init__.py").is_file()

    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(module.split(".")[: -node.level] + ([base] if base else []))
            found |= {f"{base}.{a.name}" if is_module(f"{base}.{a.name}") else base for a in node.names}
    return {m for m in found if m.startswith(PACKAGE + ".")}


def violations(root: Path) -> list[str]:
    """``"importer -> imported"`` for each import under ``root`` (a judge tree) that its folder forbids.

    An imported name that is a package's attribute (``from pkg import module``) is judged by the
    module it names; every module of the judge must sit in a folder of ``ALLOWED``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        module = ".".join((PACKAGE, *parts))
        if module == PACKAGE:
            continue
        side, targets = side_of(module), _imports(path, module, root)
        if side is None and rel.name == "__init__" and not targets:
            continue  # a folder's docstring: ``sandboxed/`` itself holds no code
        if side is None:
            found.append(f"{module} -> (no process folder)")
            continue
        for target in targets:
            other = side_of(target)
            if other is not None and other not in ALLOWED[side]:
                found.append(f"{module} -> {target}")
    return found


def test_every_judge_import_stays_within_its_process():
    assert violations(JUDGE) == []


def test_a_planted_cross_import_is_seen(tmp_path):
    """The check is not vacuous: a parent module that imports the candidate worker, a replay module
    that imports the recorder lazily inside a function and a module outside every process folder
    are each reported."""
    tree = tmp_path / "judge"
    shutil.copytree(JUDGE, tree, ignore=shutil.ignore_patterns("__pycache__"))
    (tree / "parent" / "planted.py").write_text("from hawkeye_env.judge.sandboxed.candidate import worker\n")
    (tree / "sandboxed" / "replay" / "planted.py").write_text(
        "def f():\n    from hawkeye_env.judge.sandboxed.candidate.plan_recorder import x\n")
    (tree / "loose.py").write_text("x = 1\n")
    assert sorted(violations(tree)) == [
        "hawkeye_env.judge.loose -> (no process folder)",
        "hawkeye_env.judge.parent.planted -> hawkeye_env.judge.sandboxed.candidate.worker",
        "hawkeye_env.judge.sandboxed.replay.planted -> hawkeye_env.judge.sandboxed.candidate.plan_recorder",
    ]


def _loaded_sides(modules: list[str]) -> set[str]:
    """The process folders of the judge modules a fresh interpreter holds after importing ``modules``."""
    code = (
        "import json, sys\n"
        f"for m in {modules!r}:\n    __import__(m)\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.startswith('{PACKAGE}.'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    return {side_of(m) for m in json.loads(out.stdout.strip().splitlines()[-1])} - {None}


def _modules_in(folder: str) -> list[str]:
    root = JUDGE / folder.replace(".", "/")
    return [".".join((PACKAGE, *p.relative_to(JUDGE).with_suffix("").parts)) for p in sorted(root.rglob("*.py"))
            if p.name != "__init__.py"]


def test_the_parent_process_loads_no_sandboxed_module():
    loaded = _loaded_sides(_modules_in("parent") + ["hawkeye_env.env", "hawkeye_env.vector", "training.reward",
                                                    "evals.best_of_n", "hawkeye_env.server.app"])
    assert loaded <= {"shared", "parent"}, loaded


def test_each_sandboxed_process_loads_only_its_own_side():
    entry = ["hawkeye_env.judge.sandboxed.common.entry", "hawkeye_env.judge.zygote.zygote"]
    for side in ("sandboxed.candidate", "sandboxed.replay", "sandboxed.baseline"):
        loaded = _loaded_sides(entry + _modules_in(side))
        assert side in loaded and loaded <= set(ALLOWED[side]) | {"zygote"}, (side, loaded)
