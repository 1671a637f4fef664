"""The adapters' shared judge on CPU with a results store in tmp (set before its first use)."""

from __future__ import annotations

import os

import pytest

from tests.vector_add_edits import BROKEN, FIX, RAISING, SOLUTION, TASK, fenced  # noqa: F401 - the adapter tests import them from here


@pytest.fixture(scope="package", autouse=True)
def cpu_judge(tmp_path_factory):
    saved = {k: os.environ.get(k) for k in ("HAWKEYE_STORE", "HAWKEYE_JUDGE_DEVICE")}
    os.environ["HAWKEYE_STORE"] = str(tmp_path_factory.mktemp("adapters") / "verdicts.sqlite3")
    os.environ["HAWKEYE_JUDGE_DEVICE"] = "cpu"
    from hawkeye_env.adapters.common import shared_judge

    yield shared_judge()
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture
def small_profiles(monkeypatch):
    """Profiles record at the task's CPU shape, not its timed GPU shape: a fast test."""
    from hawkeye_env.judge.parent.profiling import run

    monkeypatch.setattr(run, "CPU_RECORDING_BYTES", 0)
