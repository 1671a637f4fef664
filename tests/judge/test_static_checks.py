"""Static rules, one example each, and no false alarms on the expert solutions."""

from __future__ import annotations

import pytest

from hawkeye_env.judge.parent.static.rules import check_source
from hawkeye_env.tasks.registry import list_tasks, solution_source


@pytest.mark.parametrize("task", list_tasks(), ids=lambda s: s.id)
def test_expert_solutions_pass_every_rule(task):
    assert check_source(solution_source(task)) == []


@pytest.mark.parametrize(
    "line, code, fragment",
    [
        ("import os", "forbidden_import", "import os"),
        ("from . import x", "forbidden_import", "from ."),
        ("from torch import *", "forbidden_import", "import *"),
        ("x = eval('1')", "forbidden_call", "eval"),
        ("import torch\nx = torch.sys", "forbidden_call", "sys: stdlib module"),
        ("import torch\ntorch.matmul = None", "forbidden_attribute", "patches a module"),
        ("import torch\nx = torch._C", "forbidden_attribute", "private attribute torch._C"),
        ("x = (1).__class__", "forbidden_attribute", "__class__"),
        ("def f():\n    global y", "global_state", "global y"),
        ("def f():\n    y = 1\n    def g():\n        nonlocal y", "global_state", "nonlocal y"),
        ("g = (i for i in ())\nf = g.gi_frame", "forbidden_attribute", "gi_frame"),
        ("class A:\n    def __del__(self):\n        pass", "forbidden_attribute", "defining __del__"),
        ("import torch\ns = torch.cuda.Stream()", "forbidden_call", "Stream"),
        ("import torch\nx = torch.load('f')", "forbidden_call", "torch.load reads files"),
        ("import torch\ntorch.backends.cuda.matmul.allow_tf32 = True", "forbidden_call", "allow_tf32"),
        ("import torch\nf = torch.compile(len)", "forbidden_call", "compile"),
        ("import torch\np = torch.ones(1).data_ptr()", "forbidden_call", "data_ptr"),
    ],
)
def test_rule_fires(line, code, fragment):
    findings = check_source(line)
    assert any(f.code == code and fragment in f.message for f in findings), findings


def test_findings_carry_line_numbers():
    findings = check_source("import torch\n\nimport os\n")
    assert [(f.code, f.line) for f in findings] == [("forbidden_import", 3)]


def test_triton_load_is_not_torch_load():
    assert check_source("import triton.language as tl\ndef k(p):\n    return tl.load(p)\n") == []


def test_parse_source_is_safe_in_threads_and_on_deep_nesting():
    from concurrent.futures import ThreadPoolExecutor

    from hawkeye_env.judge.parent.static.rules import parse_source

    source = "class ModelNew:\n" + "".join(f"    def f{i}(self, x):\n        return [x, (x, {{x: x}})]\n"
                                           for i in range(200))
    with ThreadPoolExecutor(8) as pool:
        trees = list(pool.map(parse_source, [source] * 64))
    assert all(len(t.body[0].body) == 200 for t in trees)
    with pytest.raises(SyntaxError):
        parse_source("x = " + "-" * 200_000 + "1")


def test_deeply_nested_candidate_is_a_compile_error_not_a_crash():
    from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator
    from hawkeye_env.judge.parent.store import ResultStore

    source = "class ModelNew:\n    pass\nx = " + "-" * 200_000 + "1\n"
    v = Evaluator(ResultStore(":memory:"), EvalConfig(seed=0)).evaluate("vector_add_fp32", source, "cpu")
    assert v.stage.value == "compile_error" and "nests too deeply" in v.error
    assert v.reward < 0
