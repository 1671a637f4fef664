"""The throughput benchmark's tiny CPU version runs end to end and writes its JSON; the 1 -> N GPU
speedup is computed from merged per-GPU-count reports."""

from __future__ import annotations

import json
from pathlib import Path

from bench.throughput import main, merge, mixed_batch, summarise

HACKS = Path(__file__).resolve().parents[1] / "candidates" / "hacks"


def test_cpu_run_writes_json(tmp_path):
    out = tmp_path / "throughput.json"
    main(["--hacks", str(HACKS), "--device", "cpu", "--timeout", "8", "--phases", "warm", "--out", str(out)])
    report = json.loads(out.read_text())
    batch = mixed_batch(1, HACKS)
    assert len(report["batch"]) == len(batch) == 11
    assert "cold" not in report["runs"]["1"]
    run = report["runs"]["1"]["warm"]
    assert run["candidates"] == len(batch)
    assert run["unexpected"] == [], run["unexpected"]
    assert run["stages"] == {"correct": 4, "incorrect": 3, "rejected": 2, "runtime_error": 2}
    assert run["candidates_per_min"] > 0 and run["candidates_per_gpu_min"] == run["candidates_per_min"]
    assert run["gemm_profile_median"]["worker.trials_small_shape_s"] > 0
    alone = report["runs"]["1"]["gemm_alone"]
    assert alone["stages"] == ["correct"]
    assert report["summary"]["warm_gemm_wall_s_median_alone"] == alone["wall_s_median"]


def test_merge_computes_speedup_from_fewest_to_most_gpus(tmp_path):
    def one(count: int, per_min: float) -> dict:
        phase = {"candidates_per_min": per_min, "gemm_wall_s_median": 3.0 / count}
        return {"runs": {str(count): {"cold": phase, "warm": dict(phase), "gemm_alone": {"wall_s_median": 1.5}}}}

    paths = []
    for count, per_min in ((1, 10.0), (2, 19.0)):
        paths.append(tmp_path / f"{count}.json")
        paths[-1].write_text(json.dumps(one(count, per_min)))
    merged = merge(paths)
    assert sorted(merged["runs"]) == ["1", "2"]
    assert merged["summary"]["speedup"] == {"cold": 1.9, "warm": 1.9}
    assert merged["summary"]["speedup_gpus"] == [1, 2]
    assert merged["summary"]["warm_gemm_wall_s_median_in_batch"] == 3.0  # the 1-GPU run's
    assert merged["summary"]["warm_gemm_wall_s_median_alone"] == 1.5
    assert "speedup" not in summarise({"1": one(1, 10.0)["runs"]["1"]})


def test_partial_figures_are_saved_after_every_phase_and_lone_verdict(monkeypatch):
    import bench.throughput as bt
    from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator
    from hawkeye_env.judge.shared.verdict import Stage, Verdict

    monkeypatch.setattr(bt, "run_batch", lambda *a: {"candidates": 1, "wall_s": 1.0, "candidates_per_min": 60.0,
                                                       "candidates_per_gpu_min": 60.0, "gemm_wall_s_median": 1.0,
                                                       "unexpected": []})
    monkeypatch.setattr(Evaluator, "evaluate", lambda self, *a, **k: Verdict(
        task="gemm_bf16", device="cpu", stage=Stage.CORRECT, wall_s=2.0, profile={"compare_s": 0.5}))
    saved: list[dict] = []
    out = bt.bench_gpu_count(1, "cpu", [], EvalConfig(), 1, 2, ["cold", "warm"],
                             save=lambda partial: saved.append(json.loads(json.dumps(partial))))
    assert [sorted(s) for s in saved] == [["cold"], ["cold", "warm"], ["cold", "gemm_alone", "warm"],
                                          ["cold", "gemm_alone", "warm"]]
    assert saved[2]["gemm_alone"]["wall_s"] == [2.0] and saved[3]["gemm_alone"]["wall_s"] == [2.0, 2.0]
    assert out["gemm_alone"]["profile_median"] == {"compare_s": 0.5}
