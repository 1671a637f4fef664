"""The importer's outcomes on the KernelBench-format files of ``problems/``: what converts, what is
refused and why, CPU shapes that scale tuple and list constants and count parameters, GPU-only
tasks that say why, and generated modules that show the original file and list without running
a forward."""

from __future__ import annotations

import json
import time

import pytest
from typer.testing import CliRunner

from hawkeye_env.judge.parent.trial_plan import plan_trials
from hawkeye_env.kernelbench import source as kernelbench_source
from hawkeye_env.kernelbench.importer import REPORT_FILE
from hawkeye_env.kernelbench.shapes import CPU_ELEMENT_BUDGET, elements
from hawkeye_env.tasks import registry
from tests.kernelbench.conftest import PROBLEMS


def _skipped(report) -> dict[str, str]:
    return {s["problem"]: s["reason"] for s in report.skipped}


def test_every_file_converts_or_is_refused_with_a_reason(imported):
    _, report = imported
    files = sorted(p.name for p in PROBLEMS.rglob("*.py"))
    assert sorted([t["problem"] for t in report.imported] + list(_skipped(report))) == files
    reasons = _skipped(report)
    assert set(reasons) == {"1_RNN_random_h0.py", "1_pretrained_lm.py"}
    assert all(len(r.splitlines()) == 1 for r in reasons.values())
    assert "draws random numbers (randn)" in reasons["1_RNN_random_h0.py"]


def test_pretrained_file_is_refused_from_its_text_without_running():
    """The level-4 file imports a module that does not exist before it reaches ``transformers``:
    running it would fail with ModuleNotFoundError, so the pretrained reason proves it never ran."""
    path = PROBLEMS / "level4" / "1_pretrained_lm.py"
    started = time.monotonic()
    reason = kernelbench_source.refusal_reason(path.read_text())
    assert "pretrained Hugging Face weights" in reason and time.monotonic() - started < 0.1


def test_tuple_and_list_constants_are_scaled(imported):
    _, report = imported
    kl = registry.get_task(report.by_number[(1, 3)])
    assert dict(kl.gpu_shapes[0]) == {"batch_size": 128, "input_shape.0": 4096, "dim": 1}
    cpu = dict(kl.cpu_shapes[0])
    assert cpu["input_shape.0"] < 4096 and cpu["input_shape.0"] % 2 == 1 and cpu["dim"] == 1
    summed = registry.get_task(report.by_number[(1, 10)])
    assert set(summed.gpu_shapes[0]) == {"sizes.0", "sizes.1", "sizes.2", "reduce_dim"}
    module = registry.task_module(summed)
    x, = module.get_inputs(**summed.cpu_shapes[0])
    assert list(x.shape) == [summed.cpu_shapes[0][f"sizes.{i}"] for i in range(3)]
    assert isinstance(module.sizes, list)  # rebuilt with its own type


def test_parameters_count_in_the_budget(imported):
    """The list-sized MLP holds 67M parameters at its GPU shape; its CPU shape keeps inputs,
    outputs and parameters under the budget together."""
    _, report = imported
    spec = registry.get_task(report.by_number[(3, 3)])
    source = kernelbench_source.load_source(PROBLEMS / "level3" / "3_Hidden_state_attribute.py", "kb_test_mlp")
    counts = elements(source, dict(spec.cpu_shapes[0]))
    gpu = elements(source, dict(spec.gpu_shapes[0]))
    assert gpu["parameters"] > 6e7
    assert counts["parameters"] > 0 and sum(counts.values()) <= CPU_ELEMENT_BUDGET


def test_gpu_only_task_says_why(imported):
    _, report = imported
    spec = registry.get_task(report.by_number[(3, 2)])
    assert spec.cpu_shapes == () and "literals" in spec.no_cpu_reason
    assert spec.no_cpu_reason in spec.description
    with pytest.raises(ValueError, match="literals"):
        plan_trials(spec, "cpu", 0)


def test_small_structural_constants_are_kept(imported):
    _, report = imported
    arg = registry.get_task(report.by_number[(1, 6)])
    assert arg.dtypes == ("int64", "float32") and arg.tolerance("int64").rel_l2 == 0.0
    norm = registry.get_task(report.by_number[(1, 8)])
    shape = dict(norm.cpu_shapes[0])
    assert shape["batch_size"] < 16  # a 4-D LayerNorm fits only with the batch halved too


def test_generated_module_starts_with_the_file_verbatim(imported):
    out, report = imported
    for t in report.imported:
        original = (PROBLEMS / t["level"] / t["problem"]).read_text()
        module_text = (out / f"{t['id']}.py").read_text()
        assert module_text.startswith(original.rstrip("\n"))
        assert (out / "sources" / f"{t['id']}.py").read_text() == original
    saved = json.loads((out / REPORT_FILE).read_text())
    assert len(saved["imported"]) == len(report.imported)


def test_tasks_show_prints_the_original_source_and_the_cpu_reason(imported):
    from hawkeye_env.cli import app

    _, report = imported
    original = (PROBLEMS / "level1" / "2_Upper_triangular_matmul.py").read_text()
    result = CliRunner().invoke(app, ["tasks", "show", report.by_number[(1, 2)]])
    assert result.exit_code == 0, result.output
    assert "return [torch.triu(torch.randn(N, N)), torch.triu(torch.randn(N, N))]" in result.output
    assert original.splitlines()[5] in result.output
    gpu_only = CliRunner().invoke(app, ["tasks", "show", report.by_number[(3, 2)]])
    assert "no_cpu_reason" in gpu_only.output and "literals" in gpu_only.output


def test_the_prompt_shows_the_original_source(imported):
    from hawkeye_env.observation import render_task

    _, report = imported
    spec = registry.get_task(report.by_number[(1, 3)])
    original = (PROBLEMS / "level1" / "3_KLDiv_loss.py").read_text().rstrip("\n")
    assert original in render_task(spec, "cpu")


def test_listing_runs_no_forward(imported, monkeypatch):
    """Roofline counts at the task's shapes are written into the module: listing every task and
    its GPU-shape counts runs no forward of any file."""
    from hawkeye_env.kernelbench import task as kernelbench_task

    def refuse(*args, **kwargs):
        raise AssertionError("a forward ran while listing tasks")

    monkeypatch.setattr(kernelbench_task, "forward", refuse)
    registry._specs.cache_clear()
    for spec in registry.list_tasks():
        if spec.id.startswith("kb_"):
            for shape in (*spec.cpu_shapes, spec.gpu_shapes[0]):
                assert spec.flops(**shape) > 0 and spec.bytes_moved(**shape) > 0
