"""``import_kernelbench`` on KernelBench-format files written here: good files become judgeable
tasks with inferred metadata, bad files are reported with their reason, and the CLI wraps it."""

from __future__ import annotations

import json
import textwrap

import pytest
import torch
from typer.testing import CliRunner

from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.shared.verdict import Stage
from hawkeye_env.kernelbench.importer import CPU_ELEMENT_BUDGET, import_kernelbench, task_id_for
from hawkeye_env.tasks import registry
from tests.conftest import registry_restored

FILES = {
    "19_ReLU.py": """
        import torch
        from torch import nn

        class Model(nn.Module):
            def __init__(self):
                super().__init__()

            def forward(self, x):
                return torch.relu(x)

        batch_size = 16
        dim = 16384

        def get_inputs():
            return [torch.randn(batch_size, dim, dtype=torch.bfloat16)]

        def get_init_inputs():
            return []
    """,
    "1_Square_matrix_multiplication_.py": """
        import torch
        from torch import nn

        class Model(nn.Module):
            def __init__(self):
                super().__init__()

            def forward(self, a, b):
                return a @ b

        N = 2048

        def get_inputs():
            return [torch.randn(N, N), torch.randn(N, N)]

        def get_init_inputs():
            return []
    """,
    "47_Sum_reduction_over_a_dimension.py": """
        import torch
        from torch import nn

        class Model(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.dim = dim

            def forward(self, x):
                return torch.sum(x, dim=self.dim, keepdim=True)

        batch_size = 16
        dim1 = 256
        dim2 = 256
        reduce_dim = 1

        def get_inputs():
            return [torch.randn(batch_size, dim1, dim2, dtype=torch.float16)]

        def get_init_inputs():
            return [reduce_dim]
    """,
    "90_No_inputs.py": """
        import torch
        from torch import nn

        class Model(nn.Module):
            def forward(self, x):
                return x

        def get_init_inputs():
            return []
    """,
    "91_Broken.py": """
        import torch
        raise RuntimeError("this file does not import")
    """,
}

RELU_CANDIDATE = '''
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _relu(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=offs < n)


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        _relu[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
'''


def _write_level(root, name: str):
    level = root / name
    level.mkdir()
    for file, text in FILES.items():
        (level / file).write_text(textwrap.dedent(text))
    return level


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """Imports a level1 folder; afterwards the registry forgets it (environment, sys.path, cache)."""
    with registry_restored():
        level = _write_level(tmp_path_factory.mktemp("KernelBench"), "level1")
        out = tmp_path_factory.mktemp("kb_tasks")
        yield level, out, import_kernelbench(level, out)


def test_good_files_imported_bad_files_reported(imported):
    level, _, report = imported
    assert sorted(t["id"] for t in report.imported) == sorted(
        task_id_for(level / n) for n in FILES if not n.startswith("9")
    )
    reasons = {s["file"].rsplit("/", 1)[-1]: s["reason"] for s in report.skipped}
    assert set(reasons) == {"90_No_inputs.py", "91_Broken.py"}
    assert "get_inputs" in reasons["90_No_inputs.py"]
    assert "RuntimeError" in reasons["91_Broken.py"] and "does not import" in reasons["91_Broken.py"]


def test_inferred_metadata(imported):
    level, _, _ = imported
    relu = registry.get_task("kb_level1_19_relu")
    assert relu.family == "kernelbench-level1"
    assert relu.dtypes == ("bfloat16",)
    assert dict(relu.gpu_shapes[0]) == {"batch_size": 16, "dim": 16384}
    cpu = dict(relu.cpu_shapes[0])
    assert cpu["batch_size"] == 16 and cpu["dim"] % 2 == 1 and 2 * 16 * cpu["dim"] <= CPU_ELEMENT_BUDGET
    assert relu.bytes_moved(**relu.gpu_shapes[0]) == 2 * 2 * 16 * 16384
    assert relu.flops(**relu.gpu_shapes[0]) == 16 * 16384
    mm = registry.get_task(task_id_for(level / "1_Square_matrix_multiplication_.py"))
    assert mm.dtypes == ("float32",) and mm.tolerance("float32").rel_l2 == 1e-5
    red = registry.get_task(task_id_for(level / "47_Sum_reduction_over_a_dimension.py"))
    assert red.dtypes == ("float16",)
    assert dict(red.cpu_shapes[0])["reduce_dim"] == 1  # small structural constants are kept


def test_wrapper_modules_follow_the_task_format(imported):
    for spec in registry.list_tasks():
        if not spec.id.startswith("kb_"):
            continue
        module = registry.task_module(spec)
        for shape in (*spec.cpu_shapes, spec.gpu_shapes[0]):
            with torch.device("meta"):
                inputs = module.get_inputs(**shape)
                out = module.Model(*module.get_init_inputs(**shape))(*inputs)
            assert out.dtype == getattr(torch, spec.dtypes[0])


def test_imported_task_judges_a_correct_candidate_on_cpu(imported):
    evaluator = Evaluator(ResultStore(":memory:"), EvalConfig(seed=0))
    verdict = evaluator.evaluate("kb_level1_19_relu", RELU_CANDIDATE, "cpu")
    assert verdict.stage == Stage.CORRECT, (verdict.error, verdict.violations)
    wrong = RELU_CANDIDATE.replace("tl.maximum(x, 0.0)", "x")
    assert evaluator.evaluate("kb_level1_19_relu", wrong, "cpu").stage == Stage.INCORRECT


def test_cli_import_kernelbench(imported, tmp_path):
    from hawkeye_env.cli import app

    level = _write_level(tmp_path, "level2")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["tasks", "import-kernelbench", str(level), "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert len(report["imported"]) == 3 and len(report["skipped"]) == 2
    assert (out / "kb_level2_19_relu.py").is_file() and (out / "sources" / "kb_level2_19_relu.py").is_file()
    assert registry.get_task("kb_level2_19_relu").family == "kernelbench-level2"
