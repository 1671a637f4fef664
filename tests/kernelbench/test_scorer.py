"""KernelBench's scores: fast_p and Fast@1.2 as its analysis script computes them, its baseline
timing JSON and eval_results.json read in their own layout."""

from __future__ import annotations

import json

import pytest

from evals.kernelbench_fastp import (
    FAST_P,
    fast_p,
    geomean_speedup,
    read_baseline,
    read_kernelbench_results,
    render_table,
    scores,
)

RECORDS = [
    {"correct": True, "runtime_ms": 1.0, "baseline_ms": 3.0},   # 3x
    {"correct": True, "runtime_ms": 2.0, "baseline_ms": 2.0},   # 1x: not faster than p = 1
    {"correct": True, "runtime_ms": 4.0, "baseline_ms": 2.0},   # 0.5x: not faster than p = 0.5
    {"correct": False, "runtime_ms": 0.1, "baseline_ms": 2.0},  # fast but wrong
    {"correct": True, "runtime_ms": None, "baseline_ms": 2.0},  # untimed
]


def test_fast_p_counts_correct_and_strictly_faster_over_every_problem():
    assert [fast_p(RECORDS, p) for p in FAST_P] == [0.8, 0.4, 0.4, 0.2, 0.2, 0.2]
    assert scores(RECORDS)["fast@1.2"] == 0.2
    assert geomean_speedup(RECORDS) == pytest.approx((3 * 1 * 0.5) ** (1 / 3))
    assert fast_p([], 1.0) == 0.0 and geomean_speedup(RECORDS[3:4]) is None


def test_baseline_json_and_eval_results_are_read_in_kernelbench_layout(tmp_path):
    baseline = tmp_path / "baseline_time_torch.json"
    entry = {"mean": 0.25, "std": 0.01, "min": 0.24, "max": 0.3, "num_trials": 100, "hardware": "H200",
             "device": "cuda:0"}
    baseline.write_text(json.dumps({"level1": {"1_ReLU.py": entry}}))
    assert read_baseline(baseline, 1) == {"1_ReLU.py": 0.25}
    with pytest.raises(KeyError, match="level2"):
        read_baseline(baseline, 2)
    results = tmp_path / "eval_results.json"
    results.write_text(json.dumps({"1": [{"sample_id": 0, "compiled": True, "correctness": True, "runtime": 0.2},
                                         {"sample_id": 1, "compiled": True, "correctness": False, "runtime": -1.0}],
                                   "2": [{"sample_id": 0, "compiled": False, "correctness": False, "runtime": -1.0}]}))
    assert read_kernelbench_results(results) == {1: {"correct": True, "runtime_ms": 0.2},
                                                 2: {"correct": False, "runtime_ms": None}}
    table = render_table({"a": scores(RECORDS)})
    assert "| fast_1 | 0.200 |" in table and "| Fast@1.2 | 0.200 |" in table
