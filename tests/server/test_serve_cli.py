"""``hawkeye serve`` from the command line: usage errors exit 2, a missing extra says how to install it."""

from __future__ import annotations

import sys

from typer.testing import CliRunner

from hawkeye_env.cli import app

runner = CliRunner()


def test_unknown_task_and_context_exit_2():
    assert runner.invoke(app, ["serve", "--tasks", "nope"]).exit_code == 2
    result = runner.invoke(app, ["serve", "--context", "everything", "--device", "cpu"])
    assert result.exit_code == 2 and "--context" in result.output


def test_missing_openenv_gives_the_install_hint(monkeypatch):
    for name in [m for m in sys.modules if m == "openenv" or m.startswith(("openenv.", "hawkeye_env.server."))]:
        if name != "hawkeye_env.server.judge_queue":
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "openenv", None)
    result = runner.invoke(app, ["serve", "--device", "cpu", "--tasks", "vector_add_fp32"])
    assert result.exit_code == 2
    assert "pip install 'hawkeye-env[serve]'" in result.output
