"""Dependencies point one way: every import of every
package module, module-level and inside functions, read with ``ast`` (nothing is
imported), checked for cycles and for the layer order units < tasks (and kernelbench) < judge, reward < env,
evals, training, policies < bench (the developer benchmarks, not installed: no installed module imports
them). Private names taken from another module are checked by
``tests/test_no_private_imports.py``.

An edge ``a -> b`` means module ``a`` names repo module ``b`` in an import statement. ``import
a.b.c`` and ``from a.b import c`` (``c`` a submodule) give an edge to ``a.b.c``, and to the parent
packages ``a`` and ``a.b`` whose ``__init__`` runs first, unless the importer lies inside that
parent (its ``__init__`` has already run, so counting it would make every package that imports its
own submodules a cycle). ``from a.b import name`` (``name`` not a submodule) gives an edge to
``a.b``. Imports by string (``importlib.import_module``: the task registry loading task modules,
``policies.build``) are data, not edges, and are not checked here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# The installed packages, then the developer benchmarks (``bench/``, not installed: it sits above
# every installed layer, which may never import it, and may read the tests' candidates).
INSTALLED = ("hawkeye_env", "units", "reward", "policies", "training", "evals")
PACKAGES = (*INSTALLED, "bench")
SKIPPED_DIRS = (REPO / "bench" / "results",)
TOP_LEVEL_REPO_NAMES = set(PACKAGES) | {"tests"}

# A layer and the repo modules (prefixes) it must never import.
FORBIDDEN = {
    "units": ("hawkeye_env", "reward", "policies", "training", "evals"),
    "hawkeye_env.tasks": ("hawkeye_env.judge", "hawkeye_env.env", "policies", "training", "evals"),
    # the KernelBench importer writes task folders: the tasks' layer
    "hawkeye_env.kernelbench": ("hawkeye_env.judge", "hawkeye_env.env", "policies", "training", "evals"),
    "hawkeye_env.judge": (
        "hawkeye_env.env",
        "hawkeye_env.vector",
        "hawkeye_env.observation",
        "hawkeye_env.cli",
        "policies",
        "training",
        "evals",
    ),
    # the reward reads a verdict's fields (reward.score.ScoredVerdict) and imports nothing of the
    # judge, which imports it
    "reward": ("hawkeye_env", "policies", "training", "evals"),
    **{package: ("bench",) for package in INSTALLED if package not in ("units", "reward")},
}
FORBIDDEN["units"] += ("bench",)
FORBIDDEN["reward"] += ("bench",)
# "hawkeye_env.cli" also matches hawkeye_env.cli_units and hawkeye_env.cli_baselines (prefix on
# the name, not on the dotted path), as the layer rule means.
PREFIX_NOT_DOTTED = {"hawkeye_env.cli"}

# Violations that stay, each with the reason. Keys are exactly what the checks report, so a new
# violation (or a moved one) fails the test; an entry that no longer occurs fails it too.
ALLOWED_CYCLES: dict[tuple[str, ...], str] = {}
ALLOWED_LAYER_VIOLATIONS: dict[tuple[str, str], str] = {}
ALLOWED_TEST_PATHS: dict[tuple[str, str], str] = {}


def module_files() -> dict[str, Path]:
    """Every module of the installed packages, by dotted name (``pkg/__init__.py`` is ``pkg``)."""
    modules = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            if any(skipped in path.parents for skipped in SKIPPED_DIRS):
                continue
            parts = list(path.relative_to(REPO).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _resolve_relative(module: str, is_package: bool, level: int, name: str | None) -> str:
    base = module.split(".") if is_package else module.split(".")[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def _is_repo_name(dotted: str) -> bool:
    return dotted.split(".")[0] in TOP_LEVEL_REPO_NAMES


def imports_of(module: str, path: Path, known: set[str]) -> list[tuple[str, str | None, int]]:
    """``(target module, imported name or None, line)`` for every repo import in the file.
    ``imported name`` is set for ``from target import name`` where ``name`` is not a submodule."""
    tree = ast.parse(path.read_text(), filename=str(path))
    is_package = path.name == "__init__.py"
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _is_repo_name(alias.name):
                    found.append((alias.name, None, node.lineno))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                source = _resolve_relative(module, is_package, node.level, node.module)
            else:
                source = node.module or ""
            if not _is_repo_name(source):
                continue
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                if submodule in known:
                    found.append((submodule, None, node.lineno))
                else:
                    found.append((source, alias.name, node.lineno))
    return found


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def targets_with_parents(module: str, target: str, known: set[str]) -> set[str]:
    """``target`` and each parent package of it whose ``__init__`` the import runs anew."""
    parts = target.split(".")
    found = {target}
    for end in range(1, len(parts)):
        parent = ".".join(parts[:end])
        if parent in known and not _inside(module, parent):
            found.add(parent)
    return found


def strings_naming_tests_folder(module: str, path: Path) -> list[tuple[str, int]]:
    """String constants (docstrings aside) that name the ``tests`` folder: an installed package
    must not read files from it."""
    tree = ast.parse(path.read_text(), filename=str(path))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            text = node.value
            if text == "tests" or text.startswith(("tests/", "tests.")) or "/tests/" in text:
                found.append((text, node.lineno))
    return found


def with_parent_packages(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """``graph`` plus an edge to each parent package whose ``__init__`` an import runs."""
    known = set(graph)
    return {
        module: set().union(*(targets_with_parents(module, t, known) for t in targets)) - {module}
        for module, targets in graph.items()
    }


def build_graph() -> dict[str, set[str]]:
    """The import graph over repo modules (edges to the modules an import names)."""
    modules = module_files()
    known = set(modules)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for module, path in modules.items():
        for target, _, _ in imports_of(module, path, known):
            if target != module:
                graph[module].add(target)
    return graph


def find_cycles(graph: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """Every strongly connected component with more than one module (or a self-loop), each as
    a cycle through it, rotated to start at its smallest name so the report is stable."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0

    def strongconnect(root: str) -> None:
        nonlocal counter
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(component)
                continue
            if child not in graph:
                continue
            if child not in index:
                index[child] = low[child] = counter
                counter += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])

    for node in sorted(graph):
        if node not in index:
            strongconnect(node)

    cycles = []
    for component in components:
        members = set(component)
        if len(component) == 1 and component[0] not in graph.get(component[0], ()):
            continue
        cycles.append(_cycle_through(min(members), members, graph))
    return sorted(cycles)


def _cycle_through(start: str, members: set[str], graph: dict[str, set[str]]) -> tuple[str, ...]:
    """A shortest path from ``start`` back to itself inside one strongly connected component."""
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        next_frontier = []
        for node in frontier:
            for child in sorted(graph.get(node, ())):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return tuple(reversed(path))
                if child in members and child not in previous:
                    previous[child] = node
                    next_frontier.append(child)
        frontier = next_frontier
    raise AssertionError(f"{start} is not on a cycle")


def _in_layer(module: str, prefix: str) -> bool:
    if prefix in PREFIX_NOT_DOTTED:
        return module.startswith(prefix)
    return module == prefix or module.startswith(prefix + ".")


def layer_violations(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    violations = set()
    for module, targets in graph.items():
        for target in targets:
            if target.split(".")[0] == "tests":
                violations.add((module, target))
            for layer, forbidden in FORBIDDEN.items():
                if _in_layer(module, layer) and any(_in_layer(target, f) for f in forbidden):
                    violations.add((module, target))
    return sorted(violations)


def test_cycle_detector_finds_a_synthetic_cycle():
    graph = {
        "a": {"b"},
        "b": {"c"},
        "c": {"a", "d"},
        "d": set(),
        "e": {"e"},
        "f": {"d"},
    }
    assert find_cycles(graph) == [("a", "b", "c"), ("e",)]
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_import_reader_sees_function_level_relative_and_private_imports(tmp_path):
    source = tmp_path / "mod.py"
    source.write_text(
        "import units.inputs\n"
        "def f():\n"
        "    from .sibling import _hidden\n"
        "    from . import other\n"
        "    import torch\n"
    )
    known = {"units.harness", "units.sibling", "units.other", "units.inputs"}
    found = imports_of("units.harness", source, known)
    assert ("units.inputs", None, 1) in found
    assert ("units.sibling", "_hidden", 3) in found
    assert ("units.other", None, 4) in found
    assert all(target.split(".")[0] != "torch" for target, _, _ in found)
    assert layer_violations({"units.harness": {"hawkeye_env.tasks.spec"}}) == [
        ("units.harness", "hawkeye_env.tasks.spec")
    ]
    assert layer_violations({"hawkeye_env.judge.x": {"hawkeye_env.cli_units"}}) != []
    assert layer_violations({"evals.x": {"tests.candidates"}}) == [("evals.x", "tests.candidates")]
    planted = {"evals.x": {"bench.tables"}, "bench.x": {"evals.candidates"}}
    assert layer_violations(planted) == [("evals.x", "bench.tables")]
    assert layer_violations({"units.x": {"bench.tables"}}) == [("units.x", "bench.tables")]
    parents = {"hawkeye_env", "hawkeye_env.judge"}
    assert targets_with_parents("reward.score", "hawkeye_env.judge.shared.verdict", parents) == {
        "hawkeye_env.judge.shared.verdict",
        "hawkeye_env",
        "hawkeye_env.judge",
    }
    assert targets_with_parents("units.harness", "units.inputs", {"units"}) == {"units.inputs"}


def test_tests_path_reader(tmp_path):
    source = tmp_path / "mod.py"
    source.write_text(
        '"""Docstrings may name tests/judge/test_x.py."""\n'
        "from pathlib import Path\n"
        'd = Path(__file__).parent / "tests" / "candidates"\n'
    )
    assert strings_naming_tests_folder("evals.mod", source) == [("tests", 3)]


@pytest.fixture(scope="module")
def graph():
    return build_graph()


def test_walk_covers_every_package(graph):
    for package in PACKAGES:
        assert package in graph, package
    assert "hawkeye_env.judge.parent.evaluator" in graph
    assert not any(name.startswith("bench.results") for name in graph)


def _report(found, allowed) -> str:
    new = [item for item in found if item not in allowed]
    stale = [item for item in allowed if item not in found]
    lines = [f"new: {item}" for item in new] + [f"allowlisted but gone: {item}" for item in stale]
    return "\n".join(lines)


def test_no_import_cycles(graph):
    cycles = find_cycles(with_parent_packages(graph))
    report = _report(cycles, ALLOWED_CYCLES)
    assert not report, "import cycles (each module imports the next, the last the first):\n" + report


def test_layer_order(graph):
    found = layer_violations(graph)
    report = _report(found, ALLOWED_LAYER_VIOLATIONS)
    assert not report, "(importer, imported) against the layer order:\n" + report


def test_no_package_module_reads_the_tests_folder():
    modules = {m: p for m, p in module_files().items() if m.split(".")[0] in INSTALLED}
    found = sorted(
        {(module, text) for module, path in modules.items() for text, _ in strings_naming_tests_folder(module, path)}
    )
    report = _report(found, ALLOWED_TEST_PATHS)
    assert not report, "(module, string naming tests/):\n" + report


def test_the_reward_imports_no_judge_module(graph):
    """The judge imports ``reward`` (a verdict's reward); ``reward`` reads the verdict through its
    own ``ScoredVerdict`` protocol, so it imports no ``hawkeye_env`` module and no cycle can form."""
    from_reward = {t for m, ts in graph.items() if _inside(m, "reward") for t in ts if _inside(t, "hawkeye_env")}
    assert from_reward == set()
