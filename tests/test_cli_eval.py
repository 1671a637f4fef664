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
    (["--policy", "folder"], "needs --model"),
    (["--policy", "folder", "--model", "/no/such/folder"], "no solutions folder"),
    (["--context", "everything"], "--context"),
    (["--wandb", "sometimes"], "--wandb"),
])
def test_eval_usage_errors_exit_2(args, message, tmp_path):
    result = runner.invoke(app, ["eval", *args, "--out", str(tmp_path / "x")])
    assert result.exit_code == 2
    assert message in result.output


def test_eval_folder_policy_judges_the_files_it_finds(tmp_path):
    """``--policy folder`` reads KernelBench's layout; a task with no file there is ``no_source``."""
    folder = tmp_path / "solutions"
    folder.mkdir()
    result = runner.invoke(app, ["eval", "--policy", "folder", "--model", str(folder), "--tasks", "vector_add_fp32",
                                 "--n", "1", "--out", str(tmp_path / "run"), "--device", "cpu", "--wandb", "disabled"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (tmp_path / "run" / "candidates.jsonl").read_text().splitlines()]
    assert [r["stage"] for r in rows] == ["no_source"], rows


def test_eval_openai_with_a_failing_server_exits_1_with_the_error_in_results(tmp_path):
    from tests.policies.test_openai_compat import _Server

    out = tmp_path / "run"
    with _Server([404] * 50) as server:
        result = runner.invoke(app, ["eval", "--policy", "openai", "--base-url", server.url, "--model", "nope",
                                     "--tasks", "vector_add_fp32", "--n", "2", "--out", str(out), "--device", "cpu",
                                     "--wandb", "disabled", "--quiet"])
    assert result.exit_code == 1, result.output
    assert "the policy failed" in result.output
    results = json.loads((out / "results.json").read_text())
    assert results["policy_errors"][0]["missing"] == 2 and "HTTP 404" in results["policy_errors"][0]["error"]
    rows = [json.loads(line) for line in (out / "candidates.jsonl").read_text().splitlines()]
    assert {r["stage"] for r in rows} == {"policy_error"} and results["judge"]["judged"] == 0
