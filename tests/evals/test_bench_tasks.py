"""``bench.tasks``: the CPU run writes its JSON, and the GPU-path arithmetic of a row.

The GPU row is derived from a synthetic timed verdict (no GPU needed): speedups, TFLOP/s, GB/s,
the fraction of copy bandwidth and every target's status.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest

from bench.tasks import render, repeated_row, target_rows, task_row
from hawkeye_env.judge.shared.verdict import Stage, Verdict
from hawkeye_env.tasks.registry import get_task

TOP_KEYS = {"date", "device", "gpu", "driver", "versions", "config", "copy_bandwidth", "tasks"}


def test_cpu_run_writes_json_with_the_expected_keys(tmp_path):
    out = tmp_path / "tmp.json"
    cmd = [sys.executable, "-m", "bench.tasks", "--device", "cpu", "--tasks", "vector_add_fp32",
           "--out", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(out.read_text())
    assert TOP_KEYS <= report.keys()
    assert report["device"] == "cpu" and report["copy_bandwidth"] is None
    assert report["config"]["vendor_baselines"] is True
    row = report["tasks"]["vector_add_fp32"]
    assert row["stage"] == "correct" and row["timed"] is False
    assert row["timing"] == "needs a CUDA GPU"
    assert "| vector_add_fp32 | correct |" in proc.stdout


def test_gpu_row_reports_speedups_roofline_units_and_targets():
    spec = dataclasses.replace(get_task("gemm_bf16"), targets={
        "cublas": 0.95, "eager": 1.5, "fla": 1.0, "copy_bandwidth": 0.5, "compile": 1.0,
    })
    shape = dict(spec.gpu_shapes[0])
    v = Verdict(task=spec.id, device="cuda", stage=Stage.CORRECT, correct=True, timed=True,
                times_ms={"candidate": 0.2, "eager": 0.4, "cublas": 0.18},
                speedup={"eager": 2.0, "cublas": 0.9}, vendor_baselines=["cublas"],
                baselines_unavailable={"fla": "fla is not installed"}, timing={"cv": 0.01})
    copy = {"gbps": 4000.0}
    row = task_row(spec, v, "cuda", copy)
    assert row["expert_ms"] == 0.2 and row["baselines_ms"] == {"eager": 0.4, "cublas": 0.18}
    assert row["tflops"] == pytest.approx(spec.flops(**shape) / 0.2e-3 / 1e12)
    assert row["gbps"] == pytest.approx(spec.bytes_moved(**shape) / 0.2e-3 / 1e9)
    assert row["copy_fraction"] == pytest.approx(row["gbps"] / 4000.0)
    t = row["targets"]
    assert t["cublas"] == {"target": 0.95, "measured": 0.9, "status": "missed"}
    assert t["eager"]["status"] == "met"
    assert t["fla"] == {"target": 1.0, "measured": None, "status": "unavailable", "reason": "fla is not installed"}
    assert t["copy_bandwidth"]["measured"] == pytest.approx(row["copy_fraction"])
    assert t["compile"]["status"] == "not measured"
    report = {"gpu": "NVIDIA H200", "date": "d", "driver": "1", "versions": {"torch": "t", "triton": "t"},
              "copy_bandwidth": copy, "tasks": {spec.id: row, "broken": {"stage": "error", "exception": "E: x\n"}}}
    _, markdown = render(report)
    assert "| gemm_bf16 | correct | 1 | 0.2000 | - |" in markdown and "cublas>=0.95: 0.90 missed" in markdown
    assert "| broken | error |" in markdown


def test_untimed_targets_say_why():
    spec = dataclasses.replace(get_task("gemm_bf16"), targets={"cublas": 0.95})
    assert target_rows(spec, {"timed": False}, "cpu")["cublas"]["status"] == "needs a CUDA GPU"
    assert target_rows(spec, {"timed": False}, "cuda")["cublas"]["status"] == "not timed"


def _timed(spec, ms: float, stage=Stage.CORRECT) -> Verdict:
    return Verdict(task=spec.id, device="cuda", stage=stage, correct=stage == Stage.CORRECT, timed=True,
                   times_ms={"candidate": ms, "eager": 0.4}, speedup={"eager": 0.4 / ms}, timing={"cv": 0.01})


def test_repeated_verdicts_give_the_median_row_and_their_spread():
    spec = dataclasses.replace(get_task("gemm_bf16"), targets={"eager": 2.0})
    verdicts = [_timed(spec, ms) for ms in (0.21, 0.20, 0.25, 0.19, 0.20)]
    untimed = Verdict(task=spec.id, device="cuda", stage=Stage.RUNTIME_ERROR, error="worker died")
    row = repeated_row(spec, [*verdicts, untimed], "cuda", {"gbps": 4000.0})
    assert row["expert_ms"] == 0.20  # the median of the five timed verdicts
    rep = row["repeats"]
    assert rep["n"] == 6 and rep["timed"] == 5 and rep["stages"].count("runtime_error") == 1
    assert rep["device_ms"] == {"median": 0.20, "min": 0.19, "max": 0.25, "max_over_min": pytest.approx(0.25 / 0.19)}
    assert rep["speedup"]["eager"]["max_over_min"] == pytest.approx(0.25 / 0.19)
    report = {"gpu": "NVIDIA H200", "date": "d", "driver": "1", "versions": {"torch": "t", "triton": "t"},
              "copy_bandwidth": {"gbps": 4000.0}, "tasks": {spec.id: row}}
    line = next(x for x in render(report)[1].splitlines() if x.startswith("| gemm_bf16"))
    assert "| 5 / 6 | 0.2000 (0.1900-0.2500) | 1.316 |" in line and "correct/runtime_error" in line


def test_no_timed_verdict_keeps_the_first_verdicts_row():
    spec = get_task("vector_add_fp32")
    v = Verdict(task=spec.id, device="cpu", stage=Stage.CORRECT, correct=True)
    row = repeated_row(spec, [v, v], "cpu", None)
    assert row["stage"] == "correct" and row["repeats"]["timed"] == 0 and "device_ms" not in row["repeats"]


def test_cpu_run_with_two_copies_judges_each_task_twice(tmp_path):
    out = tmp_path / "tmp.json"
    cmd = [sys.executable, "-m", "bench.tasks", "--device", "cpu", "--tasks", "vector_add_fp32",
           "--verdicts", "2", "--out", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(out.read_text())
    assert report["rounds"] == 2 and report["tasks"]["vector_add_fp32"]["repeats"]["n"] == 2
    assert report["command"].endswith("--verdicts 2 --out " + str(out))
