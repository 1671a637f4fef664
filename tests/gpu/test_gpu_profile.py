"""GPU-only: the profile action's GPU path and the instruction evidence read from real cubins.

On CUDA a profile reads the plan's own cubins (no cross-compile) and runs Nsight Compute on one
replayed forward, or says why it could not (no ``ncu``, counters restricted to administrators); a
timed verdict reports its fraction of the speed of light at the SM clock it ran at; the FP8
expert's instruction evidence passes on the GPU's own binaries and the bf16 shortcut's fails.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator
from hawkeye_env.judge.parent.profiling.run import profile_report
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.shared.verdict import Stage
from hawkeye_env.tasks.registry import get_task, solution_source
from reward.score import reward_sol_v1

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU: cubins, Nsight Compute, timing"),
]
SHORTCUT = Path(__file__).resolve().parents[1] / "candidates" / "precision" / "fp8_bf16_upcast.py"


def test_a_gpu_profile_reads_the_cubins_and_runs_nsight_or_says_why(tmp_path):
    ev = Evaluator(ResultStore(tmp_path / "s.sqlite3"), EvalConfig(seed=0))
    report = profile_report(ev, "vector_add_fp32", solution_source(get_task("vector_add_fp32")), device="cuda")
    candidate = report["candidate"]
    assert candidate["stage"] == "ok", candidate["error"]
    kernel = candidate["kernels"][0]
    assert kernel["registers"] > 0 and kernel["global_loads"].get("128"), kernel
    counters = candidate["counters"]
    if "unavailable" in counters:  # a sandbox without counter access: the reason is in the text
        assert counters["unavailable"] and "Not measured" in report["text"]
    else:
        row = counters["kernels"][0]
        assert row["duration_us"] > 0 and 0 <= row["dram_throughput_pct"] <= 100
        assert "of the speed of light" in report["text"]


def test_fp8_instruction_evidence_on_the_gpus_own_binaries(tmp_path):
    ev = Evaluator(ResultStore(tmp_path / "s.sqlite3"), EvalConfig(seed=0, vendor_baselines=False))
    task = get_task("fp8_gemm_per_tensor")
    expert = ev.evaluate(task.id, solution_source(task), device="cuda")
    assert expert.stage is Stage.CORRECT and expert.instructions["passed"] is True, expert.feedback
    assert 0 < expert.timing["sol_fraction"] <= 1.0
    shortcut = ev.evaluate(task.id, SHORTCUT.read_text(), device="cuda")
    assert shortcut.stage is Stage.CORRECT and shortcut.instructions["passed"] is False, shortcut.feedback
    assert shortcut.timed and reward_sol_v1(shortcut) == 0.2
