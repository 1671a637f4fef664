"""``hawkeye eval``: a small search-policy run writes its report; usage errors exit 2."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from hawkeye_env.cli import app

runner = CliRunner()


@pytest.fixture(autouse=True)
def sandbox(tmp_path, monkeypatch):
    monkeypatch.setenv("HAWKEYE_STORE", str(tmp_path / "store.sqlite3"))
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    for var in ("WANDB_CACHE_DIR", "WANDB_CONFIG_DIR", "WANDB_DATA_DIR"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))


def test_eval_search_writes_the_report(tmp_path):
    out = tmp_path / "run"
    result = runner.invoke(app, ["eval", "--policy", "search", "--tasks", "vector_add_fp32", "--n", "2",
                                 "--out", str(out), "--device", "cpu", "--quiet"])
    assert result.exit_code == 0, result.output
    assert (out / "report.md").exists() and (out / "best_of_k.png").exists()
    results = json.loads((out / "results.json").read_text())
    assert results["config"]["tasks"] == ["vector_add_fp32"] and results["judge"]["candidates"] == 2
    judge = results["judge"]
    assert 0 <= judge["judged"] <= judge["unique_sources"] <= 2 and judge["judged_per_minute"] >= 0
    assert judge["gpus"] is None and judge["judged_per_gpu_minute"] is None  # CPU: no GPU-minutes
    assert "sources judged fresh" in (out / "report.md").read_text()
    assert "vector_add_fp32" in result.stdout and "report" in result.stdout
    assert " sample 0 turn 0: " not in result.stdout  # --quiet


def test_eval_into_a_log_file_prints_one_line_per_verdict(tmp_path):
    result = runner.invoke(app, ["eval", "--policy", "search", "--tasks", "vector_add_fp32", "--n", "2",
                                 "--out", str(tmp_path / "run"), "--device", "cpu", "--wandb", "disabled"])
    assert result.exit_code == 0, result.output
    assert "vector_add_fp32 sample 0 turn 0: correct in " in result.stdout
    assert "vector_add_fp32 sample 1 turn 0: " in result.stdout


@pytest.mark.parametrize("args,message", [
    (["--policy", "nope"], "unknown policy"),
    (["--tasks", "no_such_task"], "unknown task"),
    (["--policy", "openai"], "needs --model"),
    (["--context", "everything"], "--context"),
    (["--wandb", "sometimes"], "--wandb"),
])
def test_eval_usage_errors_exit_2(args, message, tmp_path):
    result = runner.invoke(app, ["eval", *args, "--out", str(tmp_path / "x")])
    assert result.exit_code == 2
    assert message in result.output
