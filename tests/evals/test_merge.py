"""``evals.merge``: best-of-N runs over disjoint tasks merge into one report whose per-task metrics
equal the parts' and whose overall metrics cover the union; incompatible parts are refused."""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest

from evals.best_of_n import Candidate, summarise
from evals.merge import MergeError, main, merge_runs


def _cand(task, sample, correct, speedup=None):
    return Candidate(task=task, sample=sample, turn=0, source_hash=f"{task}{sample}",
                     stage="correct" if correct else "incorrect", reward=0.6 if correct else -0.5,
                     speedup=speedup or {}, violations=[], compiled=True, correct=correct,
                     timed=speedup is not None, cached=False)


def _part(folder, tasks: dict[str, list[Candidate]], n: int, judging_s: float, gpus: int, judge="abc"):
    by_task = {t: [[c] for c in cs] for t, cs in tasks.items()}
    cands = [c for cs in tasks.values() for c in cs]
    results = {
        "config": {"policy": "search", "tasks": list(tasks), "n": n, "turns": 1, "context": "docs",
                   "device": "cuda", "workers": 4, "store": "s.sqlite", "backend": "local", "gpus": gpus,
                   "judge": {}, "versions": {"gpu": "NVIDIA H200", "judge": judge}},
        **summarise(by_task, 1), "timing_note": "",
        "judge": {"candidates": len(cands), "cached": 0, "unique_sources": len(cands), "judged": len(cands),
                  "gpus": gpus},
        "wall_s": {"sampling": 0.1, "judging": judging_s, "total": judging_s + 1},
    }
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps(results))
    (folder / "candidates.jsonl").write_text("".join(json.dumps(asdict(c)) + "\n" for c in cands))
    return folder, results


A = [_cand("a", 0, True, {"compile": 2.0}), _cand("a", 1, False), _cand("a", 2, True, {"compile": 0.5})]
B = [_cand("b", 0, True, {"compile": 8.0}), _cand("b", 1, True, {"compile": 1.0}), _cand("b", 2, False)]


def test_merged_report_keeps_each_tasks_metrics_and_covers_the_union(tmp_path):
    pa, ra = _part(tmp_path / "pa", {"a": A}, 3, judging_s=60.0, gpus=1, judge="j1")
    pb, rb = _part(tmp_path / "pb", {"b": B}, 3, judging_s=30.0, gpus=2, judge="j2")
    merged = merge_runs([pa, pb], tmp_path / "merged")
    assert merged["tasks"]["a"] == ra["tasks"]["a"] and merged["tasks"]["b"] == rb["tasks"]["b"]
    geo = merged["overall"]["geomean_best_speedup"]["compile"]
    assert geo["over_solved"] == pytest.approx((2.0 * 8.0) ** 0.5) and geo["tasks"] == 2
    assert merged["overall"]["correct_rate"] == pytest.approx(4 / 6)
    curve_a, curve_b = ra["tasks"]["a"]["best_of_k_speedup"], rb["tasks"]["b"]["best_of_k_speedup"]
    assert merged["overall"]["best_of_k_speedup"] == pytest.approx([(x + y) / 2 for x, y in zip(curve_a, curve_b)])
    # 6 fresh verdicts over 60 GPU-seconds (1 GPU) + 60 GPU-seconds (2 GPUs x 30 s)
    assert merged["judge"]["judged_per_gpu_minute"] == pytest.approx(6 * 60 / 120)
    assert [p["versions"]["judge"] for p in merged["config"]["parts"]] == ["j1", "j2"]
    report = (tmp_path / "merged" / "report.md").read_text()
    assert "| a |" in report and "| b |" in report and "## Parts" in report and "j2" in report
    assert len((tmp_path / "merged" / "candidates.jsonl").read_text().splitlines()) == 6


def test_a_parts_policy_errors_reach_the_merged_report(tmp_path):
    """A part whose policy failed keeps its failures in the merge, with the part named, and the
    merged report carries the error that makes ``hawkeye eval`` exit non-zero."""
    pa, ra = _part(tmp_path / "pa", {"a": A}, 3, judging_s=60.0, gpus=1)
    ra["policy_errors"] = [{"task": "a", "sample": 1, "error": "HTTP 503 after 3 retries"}]
    (pa / "results.json").write_text(json.dumps(ra))
    pb, _ = _part(tmp_path / "pb", {"b": B}, 3, judging_s=30.0, gpus=1)
    merged = merge_runs([pa, pb], tmp_path / "merged")
    assert merged["policy_errors"] == [{"task": "a", "sample": 1, "error": "HTTP 503 after 3 retries",
                                        "part": str(pa)}]
    assert "HTTP 503" in merged["error"]
    clean = merge_runs([_part(tmp_path / "qa", {"a": A}, 3, 60.0, 1)[0], pb], tmp_path / "merged2")
    assert clean["policy_errors"] == [] and clean["error"] == ""


def test_overlapping_tasks_and_different_settings_are_refused(tmp_path):
    pa, _ = _part(tmp_path / "pa", {"a": A}, 3, 60.0, 1)
    again, _ = _part(tmp_path / "again", {"a": A}, 3, 60.0, 1)
    with pytest.raises(MergeError, match="task a is in both"):
        merge_runs([pa, again], tmp_path / "m1")
    other_n, _ = _part(tmp_path / "n4", {"b": B + [_cand("b", 3, False)]}, 4, 60.0, 1)
    with pytest.raises(MergeError, match="n is 4"):
        merge_runs([pa, other_n], tmp_path / "m2")
    gap, _ = _part(tmp_path / "gap", {"b": B[:2]}, 3, 60.0, 1)
    with pytest.raises(MergeError, match="samples"):
        merge_runs([pa, gap], tmp_path / "m3")
    with pytest.raises(SystemExit) as exit_info:
        main([str(pa), str(tmp_path / "missing"), "--out", str(tmp_path / "m4")])
    assert exit_info.value.code == 2


def test_parts_of_other_sampling_parameters_are_refused_and_nothing_judged_is_no_rate(tmp_path):
    pa, ra = _part(tmp_path / "pa", {"a": A}, 3, judging_s=60.0, gpus=1)
    pb, rb = _part(tmp_path / "pb", {"b": B}, 3, judging_s=0.01, gpus=1)
    for folder, results, temperature in ((pa, ra, 0.8), (pb, rb, 0.2)):
        results["config"]["policy_config"] = {"name": "search", "model": "m", "temperature": temperature}
        results["judge"]["judged"] = 0
        (folder / "results.json").write_text(json.dumps(results))
    with pytest.raises(MergeError, match="policy_config"):
        merge_runs([pa, pb], tmp_path / "m1")
    rb["config"]["policy_config"]["temperature"] = 0.8
    (pb / "results.json").write_text(json.dumps(rb))
    merged = merge_runs([pa, pb], tmp_path / "m2")
    assert merged["config"]["policy_config"]["temperature"] == 0.8
    assert merged["judge"]["judged_per_minute"] is None and merged["judge"]["judged_per_gpu_minute"] is None
    assert "no judging rate" in (tmp_path / "m2" / "report.md").read_text()


def test_real_eval_outputs_merge(tmp_path, monkeypatch):
    """Two CPU ``run_eval`` outputs (the search policy) merge; the merged per-task rows are theirs."""
    from evals.best_of_n import run_eval
    from policies import make_policy

    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    store = tmp_path / "store.sqlite3"
    parts = []
    for task in ("vector_add_fp32", "rmsnorm_bf16"):
        out = tmp_path / task
        parts.append(run_eval(make_policy("search", seed=0), [task], n=2, workers=2, out_dir=out, device="cpu",
                              store=store, wandb_mode="disabled", progress=False))
    merged = merge_runs([tmp_path / "vector_add_fp32", tmp_path / "rmsnorm_bf16"], tmp_path / "merged")
    assert merged["config"]["tasks"] == ["vector_add_fp32", "rmsnorm_bf16"]
    for part in parts:
        (task,) = part["config"]["tasks"]
        assert merged["tasks"][task] == part["tasks"][task]
    assert merged["timing_note"] and merged["overall"]["candidates"] == 4


def test_split_tasks_runs_each_task_once_merges_after_each_and_resumes(tmp_path, monkeypatch):
    """``hawkeye eval --split-tasks``: one run per task, merged; a re-run keeps finished tasks, and
    a different seed judges them again."""
    from typer.testing import CliRunner

    from evals import by_task
    from hawkeye_env.cli import app

    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    ran = []
    real = by_task.run_eval

    def counted(policy, tasks, **kw):
        ran.append(tasks[0])
        return real(policy, tasks, **kw)

    monkeypatch.setattr(by_task, "run_eval", counted)
    args = ["eval", "--policy", "search", "--tasks", "vector_add_fp32,rmsnorm_bf16", "--n", "2", "--device", "cpu",
            "--wandb", "disabled", "--store", str(tmp_path / "s.sqlite3"), "--out", str(tmp_path / "suite"),
            "--split-tasks", "--quiet", "--workers", "2"]
    runner = CliRunner()
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    assert ran == ["vector_add_fp32", "rmsnorm_bf16"]
    merged = json.loads((tmp_path / "suite" / "results.json").read_text())
    assert merged["config"]["tasks"] == ["vector_add_fp32", "rmsnorm_bf16"] and merged["overall"]["candidates"] == 4
    assert (tmp_path / "suite" / "vector_add_fp32" / "report.md").exists()
    again = runner.invoke(app, args)
    assert again.exit_code == 0 and ran == ["vector_add_fp32", "rmsnorm_bf16"]  # both kept
    reseeded = runner.invoke(app, [*args, "--seed", "1"])
    assert reseeded.exit_code == 0 and ran[2:] == ["vector_add_fp32", "rmsnorm_bf16"]
    # a spent budget starts no new task: the finished ones are kept and reported, the rest wait
    more = [a if a != "vector_add_fp32,rmsnorm_bf16" else "vector_add_fp32,rmsnorm_bf16,softmax_fp32" for a in args]
    spent = runner.invoke(app, [*more, "--seed", "1", "--budget-s", "0"])  # the parts are seed 1's now
    assert spent.exit_code == 0, spent.output
    assert ran[4:] == [] and not (tmp_path / "suite" / "softmax_fp32").exists()
    merged = json.loads((tmp_path / "suite" / "results.json").read_text())
    assert merged["config"]["tasks"] == ["vector_add_fp32", "rmsnorm_bf16"]
    fresh = [a if a != str(tmp_path / "suite") else str(tmp_path / "other") for a in args]
    nothing = runner.invoke(app, [*fresh, "--budget-s", "0"])
    assert nothing.exit_code == 2 and "no task finished" in nothing.output
    assert runner.invoke(app, [*args[:-4], "--budget-s", "5"]).exit_code == 2  # without --split-tasks
