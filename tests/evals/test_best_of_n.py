"""End-to-end best-of-N: the search policy on vector_add_fp32, its files, the store-backed rerun,
multi-turn feedback with a failed edit, and the timed-metrics path on synthetic verdicts."""

from __future__ import annotations

import json
import math
import time

import pytest

from evals.best_of_n import POLICY_ERROR, Candidate, run_eval, summarise
from hawkeye_env.env import KernelOptEnv
from hawkeye_env.tasks.registry import get_task, solution_source
from policies import make_policy
from policies.search import fenced
from reward import REWARD_VERSION


@pytest.fixture(scope="module")
def store_path(tmp_path_factory):
    return tmp_path_factory.mktemp("store") / "results.sqlite3"


@pytest.fixture(autouse=True)
def wandb_sandbox(tmp_path, monkeypatch):
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    for var in ("WANDB_CACHE_DIR", "WANDB_CONFIG_DIR", "WANDB_DATA_DIR"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))


def test_search_eval_writes_every_output_and_reruns_from_the_store(tmp_path, store_path):
    out = tmp_path / "eval"
    results = run_eval(make_policy("search", seed=0), ["vector_add_fp32"], n=3, workers=2, out_dir=out,
                       device="cpu", store=store_path, wandb_mode="offline", progress=False)
    for name in ("results.json", "candidates.jsonl", "report.md", "best_of_k.png", "distributions.png"):
        assert (out / name).stat().st_size > 0, name
    [wandb_run] = (out / "wandb").glob("offline-run-*/run-*.wandb")
    keys = (b"policy_config", b"git_commit", b"reward_version")
    deadline = time.monotonic() + 30  # W&B's writer process may still be flushing on a loaded host
    while not all(key in wandb_run.read_bytes() for key in keys) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert all(key in wandb_run.read_bytes() for key in keys)
    assert results["wandb"]["sync"].startswith("wandb sync ")
    rows = [json.loads(line) for line in (out / "candidates.jsonl").read_text().splitlines()]
    assert [(r["task"], r["sample"], r["turn"]) for r in rows] == [("vector_add_fp32", j, 0) for j in range(3)]
    assert {"source_hash", "stage", "reward", "speedup", "violations"} <= rows[0].keys()
    saved = json.loads((out / "results.json").read_text())
    task = saved["tasks"]["vector_add_fp32"]
    assert task["candidates"] == 3 and len(task["best_of_k_reward"]) == 3 and len(task["pass_at_k"]) == 3
    assert rows[0]["stage"] == "correct" and task["pass_at_k"][-1] == 1.0  # sample 0 is the expert
    assert saved["timing_note"] and saved["overall"]["fast_p"] == {}
    report = (out / "report.md").read_text()
    assert "untimed" in report
    cfg = saved["config"]
    assert cfg["policy_config"] == {"name": "search", "seed": 0, "max_knobs": cfg["policy_config"]["max_knobs"]}
    assert cfg["reward_version"] == cfg["versions"]["reward"] == REWARD_VERSION and len(cfg["git_commit"]) >= 40
    assert f"git commit `{cfg['git_commit']}`" in report and f"reward `{REWARD_VERSION}`" in report
    assert "seed `0`" in report
    assert len((out / "samples.jsonl").read_text().splitlines()) == 3 and saved["samples"]["reused"] == 0

    again = run_eval(make_policy("search", seed=0), ["vector_add_fp32"], n=3, out_dir=tmp_path / "again",
                     device="cpu", store=store_path, wandb_mode="disabled", progress=False)
    assert again["judge"]["cached"] == 3 and again["wall_s"]["judging"] < 2.0
    assert again["tasks"] == results["tasks"] and again["wandb"] is None


class _ScriptedPolicy:
    """Turn 0: the expert source; turn 1: a SEARCH/REPLACE that does not apply; turn 2: echo."""

    name = "scripted"

    def __init__(self):
        self.seen: list[list[dict]] = []

    def sample(self, observations, n):
        self.seen.append(observations)
        turn = observations[0]["turn"]
        if turn == 0:
            return [[fenced(solution_source(get_task(o["task_id"])))] * n for o in observations]
        if turn == 1:
            return [["<<<<<<< SEARCH\nno such line\n=======\nx = 1\n>>>>>>> REPLACE\n"] for _ in observations]
        return [[fenced(o["source"])] for o in observations]


def test_multi_turn_feeds_back_source_and_feedback_and_survives_a_bad_edit(tmp_path, store_path):
    policy = _ScriptedPolicy()
    results = run_eval(policy, ["vector_add_fp32"], n=2, turns=3, out_dir=tmp_path, device="cpu",
                       store=store_path, wandb_mode="disabled", progress=False)
    turn1, turn2 = policy.seen[1], policy.seen[2]
    assert [o["trajectory"] for o in turn1] == [0, 1]
    assert "class ModelNew" in turn1[0]["source"] and "CORRECT" in turn1[0]["feedback"]
    assert "NO SOURCE" in turn2[0]["feedback"] and "block 1: SEARCH text not found" in turn2[0]["feedback"]
    assert "the current source is unchanged" in turn2[0]["feedback"]
    assert turn2[0]["source"] == turn1[0]["source"]  # a failed edit leaves the source as it was
    env = KernelOptEnv(tasks=["vector_add_fp32"], store=store_path, device="cpu", max_turns=3,
                       target_speedup=math.inf)
    env.reset(options={"task": "vector_add_fp32"})
    stepped = env.step(fenced(solution_source(get_task("vector_add_fp32"))))[0]
    assert turn1[0]["prompt"] == stepped["prompt"] and turn1[0]["messages"] == stepped["messages"]
    env.close()
    rows = [json.loads(line) for line in (tmp_path / "candidates.jsonl").read_text().splitlines()]
    by_turn = {r["turn"]: r for r in rows if r["sample"] == 0}
    assert by_turn[1]["stage"] == "no_source" and by_turn[1]["edit_error"]
    assert by_turn[2]["stage"] == "correct"
    assert results["overall"]["best_reward_by_turn"] == pytest.approx([0.2, 0.2, 0.2])
    assert (tmp_path / "best_by_turn.png").exists()


class _FailingPolicy:
    """Sample 0 is the expert; the server 'failed' for the rest, as the OpenAI client reports it."""

    name = "failing"

    def __init__(self):
        self.errors = []
        self.raw = []

    def sample(self, observations, n):
        self.errors += [{"task_id": o["task_id"], "trajectory": 0, "turn": o["turn"], "missing": n - 1,
                         "error": "HTTP 404: model 'nope' does not exist"} for o in observations]
        self.raw += [{"task_id": o["task_id"], "sample": 0, "text": "x"} for o in observations]
        return [[fenced(solution_source(get_task(o["task_id"])))] + [""] * (n - 1) for o in observations]


def test_policy_failures_are_not_judged_and_are_reported(tmp_path, store_path):
    """Failed samples are rows with no reward, counted apart: the rates, rewards and curves are
    the obtained sample's alone; the report says how many failed and why, before any figure."""
    results = run_eval(_FailingPolicy(), ["vector_add_fp32"], n=3, out_dir=tmp_path, device="cpu",
                       store=store_path, wandb_mode="disabled", progress=False)
    rows = [json.loads(line) for line in (tmp_path / "candidates.jsonl").read_text().splitlines()]
    assert [r["stage"] for r in rows] == ["correct", POLICY_ERROR, POLICY_ERROR]
    assert rows[1]["policy_error"] == "HTTP 404: model 'nope' does not exist" and rows[1]["source_hash"] == ""
    assert rows[1]["reward"] is None
    task = results["tasks"]["vector_add_fp32"]
    assert results["judge"]["candidates"] == 3 and task["stages"]["no_source"] == 0
    assert (task["candidates"], task["obtained"], task["policy_failures"], task["trajectories"]) == (3, 1, 2, 1)
    assert task["stages"][POLICY_ERROR] == 2 and task["correct_rate"] == 1.0
    assert task["mean_reward"] == rows[0]["reward"] == task["best_of_k_reward"][-1] and len(task["pass_at_k"]) == 1
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["policy_errors"][0]["missing"] == 2 and "HTTP 404" in saved["error"]
    assert json.loads((tmp_path / "raw_replies.jsonl").read_text().splitlines()[0])["text"] == "x"
    report = (tmp_path / "report.md").read_text()
    assert "**Policy failures:** 2 of 3 samples could not be obtained" in report
    assert report.index("HTTP 404: model 'nope'") < report.index("## Overall")
    assert "| vector_add_fp32 | 1 | 2 | 1.000 | 1.000 |" in report


def _cand(task, sample, correct, speedup=None, reward=None):
    timed = speedup is not None
    return Candidate(task=task, sample=sample, turn=0, source_hash=f"{task}{sample}",
                     stage="correct" if correct else "incorrect",
                     reward=reward if reward is not None else (0.6 if correct else -0.5),
                     speedup=speedup or {}, violations=[], compiled=True, correct=correct, timed=timed, cached=False)


def test_timed_metrics_per_baseline_and_geomean():
    by_task = {
        "a": [[_cand("a", 0, True, {"eager": 2.0, "compile": 1.1})], [_cand("a", 1, False)],
              [_cand("a", 2, True, {"eager": 4.0, "compile": 0.9})], [_cand("a", 3, False)]],
        "b": [[_cand("b", 0, False)], [_cand("b", 1, False)], [_cand("b", 2, False)], [_cand("b", 3, False)]],
    }
    results = summarise(by_task, turns=1)
    a = results["tasks"]["a"]
    assert a["fast_p"]["eager"] == {"0": 0.5, "1": 0.5, "1.2": 0.5, "2": 0.25}
    assert a["fast_p"]["compile"] == {"0": 0.5, "1": 0.25, "1.2": 0.0, "2": 0.0}
    assert a["fast_p"]["best"]["1"] == 0.25  # the fastest baseline per candidate: 1.1 and 0.9
    assert a["best_speedup"] == {"eager": 4.0, "compile": 1.1, "best": 1.1}
    assert a["best_of_k_speedup"][-1] == pytest.approx(1.1) and a["best_of_k_speedup"][0] == pytest.approx(0.5)
    geo = results["overall"]["geomean_best_speedup"]["eager"]
    assert (geo["solved_tasks"], geo["tasks"]) == (1, 2)
    assert geo["over_solved"] == pytest.approx(4.0) and geo["unsolved_as_1"] == pytest.approx(2.0)
    assert results["overall"]["pass_at_k"][0] == pytest.approx((0.5 + 0.0) / 2)


def test_broken_speedups_are_ignored_not_fatal():
    by_task = {"a": [[_cand("a", 0, True, {"eager": float("nan")})], [_cand("a", 1, True, {"eager": 0.0})],
                     [_cand("a", 2, True, {"eager": 3.0})]]}
    results = summarise(by_task, turns=1)
    assert results["tasks"]["a"]["best_speedup"]["eager"] == 3.0
    third = pytest.approx(1 / 3)
    assert results["tasks"]["a"]["fast_p"]["eager"] == {"0": 1.0, "1": third, "1.2": third, "2": third}
    assert results["overall"]["geomean_best_speedup"]["eager"]["over_solved"] == pytest.approx(3.0)


def test_report_of_timed_results_has_speedup_plots_and_rows(tmp_path):
    from evals import plots, report

    cands = [_cand("a", 0, True, {"eager": 2.0, "compile": 1.1}), _cand("a", 1, False),
             _cand("a", 2, True, {"eager": 4.0, "compile": 0.9})]
    results = {
        "config": {"policy": "fake", "tasks": ["a"], "n": 3, "turns": 1, "context": "docs", "device": "cuda",
                   "workers": 1, "store": ":memory:", "versions": {"gpu": "NVIDIA H200"}},
        **summarise({"a": [[c] for c in cands]}, turns=1),
        "timing_note": "", "judge": {"candidates": 3, "cached": 0, "unique_sources": 3},
        "wall_s": {"sampling": 0.0, "judging": 1.0},
    }
    pngs = plots.make_plots(results, cands, tmp_path)
    assert [p.name for p in pngs] == ["best_of_k.png", "distributions.png"] and all(p.exists() for p in pngs)
    results["plots"] = [p.name for p in pngs]
    text = report.write_markdown(results, tmp_path).read_text()
    assert "fast_p vs eager" in text and "geomean best speedup vs best" in text and "best_of_k_speedup" in text
    assert "untimed" not in text


def test_judge_rate_counts_unique_fresh_sources_per_gpu_minute(monkeypatch):
    import torch

    from evals.best_of_n import Candidate, judge_rate

    fields = {f: None for f in Candidate.__dataclass_fields__}

    def cand(src: str, cached: bool) -> Candidate:
        return Candidate(**{**fields, "task": "t", "source_hash": src, "cached": cached})

    cands = [cand("a", False), cand("a", False), cand("b", True), cand("c", False)]
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    r = judge_rate(cands, 30.0, "cuda", "local", None)
    assert (r["candidates"], r["cached"], r["unique_sources"], r["judged"]) == (4, 1, 3, 2)
    assert r["judged_per_minute"] == 4.0 and r["gpus"] == 2 and r["judged_per_gpu_minute"] == 2.0
    assert judge_rate(cands, 30.0, "cuda", "ray", None)["judged_per_gpu_minute"] is None
    assert judge_rate(cands, 0.0, "cpu", "local", None)["judged_per_minute"] is None
    cached_only = [cand("a", True), cand("b", True)]
    assert judge_rate(cached_only, 0.01, "cuda", "local", None)["judged_per_minute"] is None
