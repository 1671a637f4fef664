"""GPU-only: ``hawkeye baselines`` times a task's baselines in a worker and caches them.

Skipped on machines without CUDA (the reason is printed).
"""

from __future__ import annotations

import json

import pytest
import torch
from typer.testing import CliRunner

from hawkeye_env.cli import app

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU: baselines are timed with CUDA events"),
]
runner = CliRunner()


def _baselines(store, *extra) -> dict:
    args = ["baselines", "--tasks", "gemm_bf16", "--device", "cuda", "--json", "--store", str(store), *extra]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["tasks"]["gemm_bf16"]


def test_gemm_baselines_are_measured_then_served_from_the_store(tmp_path):
    store = tmp_path / "results.sqlite3"
    row = _baselines(store)
    assert row["error"] == "", row["error"]
    eager = row["baselines"]["eager"]
    assert eager["median_ms"] > 0 and eager["tflops"] > 0 and eager["cached"] is False
    assert set(row["declared"]) <= set(row["baselines"])
    again = _baselines(store)
    assert again["baselines"]["eager"]["cached"] is True
    assert again["baselines"]["eager"]["median_ms"] == eager["median_ms"]
