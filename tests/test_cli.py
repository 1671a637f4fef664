"""The ``hawkeye`` CLI contract: exit codes, JSON keys, task browsing."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from hawkeye_env.cli import app
from hawkeye_env.tasks.registry import list_tasks

runner = CliRunner()
REQUIRED_KEYS = {"task", "device", "compiled", "correct", "timed", "violations", "reward", "speedup",
                 "times_ms", "feedback"}


@pytest.fixture(autouse=True)
def private_store(tmp_path, monkeypatch):
    monkeypatch.setenv("HAWKEYE_STORE", str(tmp_path / "store.sqlite3"))


def test_check_default_solution_json():
    result = runner.invoke(app, ["check", "vector_add_fp32", "--device", "cpu", "--json"])
    assert result.exit_code == 0, result.output
    verdict = json.loads(result.stdout)
    assert REQUIRED_KEYS <= verdict.keys()
    assert verdict["correct"] is True and verdict["timed"] is False and verdict["speedup"] == {}


def test_check_exits_zero_for_a_failing_candidate(tmp_path):
    cand = tmp_path / "cand.py"
    cand.write_text("import os\nclass ModelNew:\n    pass\n")
    result = runner.invoke(app, ["check", "vector_add_fp32", str(cand), "--device", "cpu", "--json"])
    assert result.exit_code == 0, result.output
    verdict = json.loads(result.stdout)
    assert verdict["violations"][0]["code"] == "no_kernel_launch"  # names neither triton nor a unit
    assert verdict["reward"] == -1.0


def test_check_reply_extracts_fenced_code(tmp_path):
    from hawkeye_env.tasks.registry import get_task, solution_source

    reply = tmp_path / "reply.md"
    reply.write_text("Here is my kernel:\n```python\n" + solution_source(get_task("vector_add_fp32")) + "```\n")
    result = runner.invoke(app, ["check", "vector_add_fp32", str(reply), "--reply", "--device", "cpu"])
    assert result.exit_code == 0, result.output
    assert "CORRECT" in result.stdout


@pytest.mark.parametrize("args", [["check", "no_such_task"], ["check", "vector_add_fp32", "/no/such/file.py"],
                                  ["tasks", "show", "no_such_task"]])
def test_usage_errors_exit_two(args):
    result = runner.invoke(app, args)
    assert result.exit_code == 2


def test_tasks_list_json_has_every_task():
    result = runner.invoke(app, ["tasks", "list", "--json"])
    assert result.exit_code == 0
    assert [t["id"] for t in json.loads(result.stdout)] == [s.id for s in list_tasks()]


def test_tasks_show_prints_reference():
    result = runner.invoke(app, ["tasks", "show", "softmax_fp32"])
    assert result.exit_code == 0
    assert "class Model" in result.stdout and "tolerance float32" in result.stdout
