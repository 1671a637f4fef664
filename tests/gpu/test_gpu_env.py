"""GPU-only env check: on CUDA a timed step's feedback compares the candidate with its units' metrics."""

from __future__ import annotations

import pytest
import torch

from hawkeye_env.env import KernelOptEnv
from hawkeye_env.tasks.registry import get_task, solution_source

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU: unit metrics are GPU timings"),
]


def test_cuda_feedback_reports_unit_metrics(tmp_path):
    env = KernelOptEnv(tasks=["vector_add_fp32"], store=str(tmp_path / "store.sqlite3"), device="cuda")
    env.reset(seed=0, options={"task": "vector_add_fp32"})
    obs, reward, _, _, info = env.step(solution_source(get_task("vector_add_fp32")))
    verdict = info["verdict"]
    assert verdict["timed"], verdict["feedback"]
    assert reward > 0.2
    feedback = obs["feedback"]
    assert "Unit metrics (diagnostic, weight 0" in feedback, feedback
    assert "coalesced_access:" in feedback and "TB/s" in feedback and "pass rule" in feedback
