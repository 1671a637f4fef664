"""``policies/inline.py``: an expert with its unit imports inlined is the same program, knobs in reach."""

from __future__ import annotations

import ast

import pytest

from hawkeye_env.tasks.registry import get_task, solution_source
from policies.inline import inline_unit_imports
from policies.search import knob_sites, task_seeds


def _write(root, dotted: str, text: str) -> None:
    path = root.joinpath(*dotted.split(".")).with_suffix(".py")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_imports_become_module_text_and_aliases_assignments(tmp_path):
    _write(tmp_path, "units.demo.kernel", '"""doc"""\nfrom __future__ import annotations\nBLOCK_M = 64\n\n'
                                          'def mm(a):\n    return a * BLOCK_M\n')
    source = ('"""Expert."""\nfrom __future__ import annotations\nimport torch\n'
              'from units.demo.kernel import mm as fast_mm\nfrom units.demo.kernel import mm\n\n'
              'def run(a):\n    return fast_mm(a) + mm(a)\n')
    out = inline_unit_imports(source, tmp_path)
    assert out is not None and '"""doc"""' not in out
    assert not [n for n in ast.walk(ast.parse(out)) if isinstance(n, ast.ImportFrom) and n.module.startswith("units")]
    assert out.count("BLOCK_M = 64") == 1 and out.count("from __future__") == 1
    namespace: dict = {}
    exec(compile(out.replace("import torch\n", ""), "inlined", "exec"), namespace)
    assert namespace["run"](2) == 256  # the alias is bound after the body it names


def test_a_module_importing_one_inlined_before_it_binds_each_name_once(tmp_path):
    """``units.demo.fast`` imports ``step`` from ``units.demo.kernel``, which the expert imports first:
    that import and ``fast``'s repeated ``import math`` go, so ``step`` and ``math`` are bound once
    (the static rules refuse a module-level name a kernel reads when it is bound twice)."""
    _write(tmp_path, "units.demo.kernel", "import math\n\ndef step(x):\n    return math.floor(x) + 1\n")
    _write(tmp_path, "units.demo.fast", "import math\nfrom units.demo.kernel import step\n\n"
                                        "def run(x):\n    return step(x) * math.ceil(x)\n")
    source = "from units.demo.kernel import step\nfrom units.demo.fast import run\n"
    out = inline_unit_imports(source, tmp_path)
    assert out is not None and out.count("import math") == 1 and "from units" not in out
    assert [n.name for n in ast.parse(out).body if isinstance(n, ast.FunctionDef)] == ["step", "run"]
    namespace: dict = {}
    exec(compile(out, "inlined", "exec"), namespace)
    assert namespace["run"](2.5) == 9


def test_nothing_to_inline_or_a_name_clash_gives_none(tmp_path):
    _write(tmp_path, "units.demo.kernel", "def helper():\n    return 1\n")
    assert inline_unit_imports("import torch\n", tmp_path) is None
    assert inline_unit_imports("from units.demo.kernel import helper\n\ndef helper():\n    pass\n", tmp_path) is None
    assert inline_unit_imports("from units.missing.kernel import f\n", tmp_path) is None
    assert inline_unit_imports("def broken(:\n", tmp_path) is None


def test_an_expert_without_knobs_gains_them_and_they_are_the_units():
    expert = solution_source(get_task("fp8_gemm_per_tensor"))
    out = inline_unit_imports(expert)
    assert knob_sites(expert) == [] and out is not None
    names = {s.name for s in knob_sites(out)}
    assert {"block_m", "block_n", "block_k", "num_stages"} <= names  # the Gluon unit's configurations
    assert out in task_seeds("fp8_gemm_per_tensor")
    assert "class ModelNew" in out and ast.parse(out)


@pytest.mark.parametrize("task", ["fp8_gemm_per_tensor", "gemm_skinny_bf16", "simple_gla_long_bf16"])
def test_the_inlined_expert_passes_the_judge(task, tmp_path):
    from hawkeye_env.judge.parent.evaluator import Evaluator
    from hawkeye_env.judge.parent.store import ResultStore

    source = inline_unit_imports(solution_source(get_task(task)))
    verdict = Evaluator(ResultStore(tmp_path / "store.sqlite3")).evaluate(task, source, "cpu")
    assert verdict.correct, verdict.feedback
