"""The served env takes a split as the env does (``HAWKEYE_SERVE_TASKS=split:validation``, ``hawkeye
serve --split validation``): a reset without a task draws only that split's tasks, a reset on a task
of another split is refused with the task's split, and an unknown split stops the server at start."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from hawkeye_env.cli import app as cli


def _settings(tmp_path, tasks: str) -> dict:
    return {"HAWKEYE_JUDGE_DEVICE": "cpu", "HAWKEYE_STORE": str(tmp_path / "v.sqlite3"), "HAWKEYE_SERVE_TASKS": tasks,
            "HAWKEYE_SERVE_CONTEXT": "none", "HAWKEYE_SERVE_WORKERS": "1"}


def test_a_server_of_a_split_draws_from_it_and_refuses_the_others(generated_splits, tmp_path):
    from starlette.testclient import TestClient

    from hawkeye_env.server.app import app_from_env

    validation = {i for i, s in generated_splits.items() if s == "validation"}
    train = next(i for i, s in generated_splits.items() if s == "train")
    with TestClient(app_from_env(_settings(tmp_path, "split:validation"))) as client:
        drawn = {client.post("/reset", json={"seed": seed}).json()["observation"]["task_id"] for seed in range(8)}
        refused = [client.post("/reset", json={"task": task}) for task in (train, "vector_add_fp32", "nope")]
    assert drawn == validation
    assert all(r.status_code == 400 for r in refused)
    details = [r.json()["detail"] for r in refused]
    assert f"unknown task '{train}' for this server (a train task); it serves: " in details[0]
    assert "(a test task)" in details[1] and "'nope' for this server; it serves" in details[2]
    with pytest.raises(ValueError, match="HAWKEYE_SERVE_TASKS='split:holdout': unknown split 'holdout'"):
        app_from_env(_settings(tmp_path, "split:holdout"))


def test_the_serve_command_takes_a_split(generated_splits, monkeypatch):
    import hawkeye_env.server.app as served

    started = {}
    monkeypatch.setattr(served, "serve", lambda evaluator, **kwargs: started.update(kwargs))
    result = CliRunner().invoke(cli, ["serve", "--split", "train", "--device", "cpu"])
    assert result.exit_code == 0, result.output
    assert sorted(started["tasks"]) == sorted(i for i, s in generated_splits.items() if s == "train")
    bad = CliRunner().invoke(cli, ["serve", "--split", "holdout", "--device", "cpu"])
    assert bad.exit_code == 2 and "unknown split 'holdout'" in bad.output
