"""``hawkeye baselines``: the CPU listing, usage errors, and the baseline-only worker path.

The worker path is driven on CPU with a task folder whose only baselines are vendor functions that
cannot run (so no CUDA timing is reached): the job crosses the process boundary, the reasons come
back and are cached, and a second call is answered from the store.
"""

from __future__ import annotations

import json
import textwrap

import pytest
import torch
from typer.testing import CliRunner

from hawkeye_env.cli import app
from hawkeye_env.cli_baselines import measure_task
from hawkeye_env.judge.parent.evaluator import EvalConfig
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.tasks.registry import TASK_FOLDER_MARKER, list_tasks, register_tasks_from

runner = CliRunner()

TASK_MODULE = '''
import torch
from hawkeye_env.tasks.spec import BaselineUnavailable, TaskSpec


class Model(torch.nn.Module):
    def forward(self, a):
        return a * 2


def get_inputs(N=64):
    return [torch.randn(N)]


def get_init_inputs(N=64):
    return []


def missing_library(model, a):
    raise BaselineUnavailable("vendorlib is not installed here")


def broken(model, a):
    raise RuntimeError("unsupported shape")


SPEC = TaskSpec(
    id="double_vendor_probe", family="elementwise", description="2a", module="double_vendor_probe",
    dtypes=("float32",), cpu_shapes=({"N": 7},), gpu_shapes=({"N": 64},),
    flops=lambda N: N, bytes_moved=lambda N: 8 * N,
    vendor_baselines={"vendorlib": "double_vendor_probe:missing_library", "broken": "double_vendor_probe:broken"},
)
'''


@pytest.fixture(autouse=True)
def private_store(tmp_path, monkeypatch):
    monkeypatch.setenv("HAWKEYE_STORE", str(tmp_path / "store.sqlite3"))


def test_cpu_lists_declared_baselines_and_exits_zero():
    result = runner.invoke(app, ["baselines", "--device", "cpu"])
    assert result.exit_code == 0, result.output
    assert "need" in result.stdout.lower() and "CUDA GPU" in result.stdout
    for spec in list_tasks():
        assert spec.id in result.stdout


@pytest.mark.skipif(torch.cuda.is_available(), reason="asserts the fallback when CUDA is absent")
def test_cuda_requested_without_a_gpu_lists_declared_baselines_as_json():
    task = list_tasks()[0]
    result = runner.invoke(app, ["baselines", "--tasks", task.id, "--device", "cuda", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["device"] == "cpu" and "CUDA GPU" in data["note"]
    declared = data["tasks"][task.id]
    assert declared["declared"][:2] == ["eager", "compile"]
    assert declared["vendor_baselines"] == dict(task.vendor_baselines)
    assert declared["declared"][2:] == [n for n in task.vendor_baselines if n not in ("eager", "compile")]


@pytest.mark.parametrize("args", [["--tasks", "no_such_task"], ["--device", "tpu"], ["--split", "holdout"]])
def test_usage_errors_exit_2(args):
    assert runner.invoke(app, ["baselines", *args]).exit_code == 2


def test_a_split_lists_its_tasks_only(generated_splits):
    result = runner.invoke(app, ["baselines", "--split", "validation", "--device", "cpu", "--json"])
    assert result.exit_code == 0, result.output
    validation = sorted(i for i, s in generated_splits.items() if s == "validation")
    assert sorted(json.loads(result.stdout)["tasks"]) == validation


def test_baseline_worker_reports_and_caches_unavailable_vendors(tmp_path, isolated_task_registry):
    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / TASK_FOLDER_MARKER).write_text("")
    (folder / "double_vendor_probe.py").write_text(textwrap.dedent(TASK_MODULE))
    (spec,) = register_tasks_from(folder)
    config = EvalConfig(baselines=(), timeout_s=120)
    with ResultStore(tmp_path / "store.sqlite3") as store:
        row = measure_task(spec, "cpu", store, config, refresh=False)
        assert row["error"] == "" and row["declared"] == ["vendorlib", "broken"]
        assert row["baselines"]["vendorlib"] == {"unavailable": "vendorlib is not installed here", "cached": False}
        assert row["baselines"]["broken"]["unavailable"] == "RuntimeError: unsupported shape"
        again = measure_task(spec, "cpu", store, config, refresh=False)
        assert {e["cached"] for e in again["baselines"].values()} == {True}
        assert again["baselines"]["broken"]["unavailable"] == "RuntimeError: unsupported shape"
        fresh = measure_task(spec, "cpu", store, config, refresh=True)
        assert {e["cached"] for e in fresh["baselines"].values()} == {False}
