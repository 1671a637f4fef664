"""``bench.search`` on CPU: the search policy's batch judged in each phase's mode, the
environment restored after each phase, and the report readable by BENCHMARKS.md's table."""

from __future__ import annotations

import json
import os
import re

import pytest

from bench import search as bench_search
from bench.tables import Loaded, search_throughput
from hawkeye_env.judge.parent import record_replay
from hawkeye_env.judge.parent.launch import forkserver, isolation
from hawkeye_env.judge.shared import cuda_schedule


def test_each_phase_judges_the_whole_batch_in_its_mode(tmp_path, monkeypatch):
    monkeypatch.delenv(isolation.ENV, raising=False)
    monkeypatch.delenv(record_replay.ENV_FLAG, raising=False)
    monkeypatch.delenv(forkserver.ENV_FLAG, raising=False)
    seen = []
    real = bench_search.judge_batch

    def spy(*args, **kwargs):
        seen.append((os.environ.get(isolation.ENV), os.environ.get(record_replay.ENV_FLAG),
                     os.environ.get(forkserver.ENV_FLAG), os.environ.get(cuda_schedule.ENV)))
        return real(*args, **kwargs)

    monkeypatch.setattr(bench_search, "judge_batch", spy)
    out = tmp_path / "bs.json"
    monkeypatch.delenv(cuda_schedule.ENV, raising=False)
    bench_search.main(["--device", "cpu", "--n", "2", "--tasks", "vector_add_fp32", "--phases", "bwrap:2",
                       "bwrap-fresh:1", "worker+blocking:1", "--out", str(out)])
    report = json.loads(out.read_text())
    # a CPU worker has no CUDA context
    assert seen == [("bwrap", "on", "1", None), ("bwrap", "on", "0", None), ("off", "off", "0", "blocking")]
    assert not {isolation.ENV, record_replay.ENV_FLAG, forkserver.ENV_FLAG, cuda_schedule.ENV} & set(os.environ)
    assert [p["cuda_schedule"] for p in report["phases"]] == ["auto", "auto", "blocking"]
    assert [p["forkserver"] for p in report["phases"]] == [True, False, False]
    assert report["candidates"] == 2 and [p["mode"] for p in report["phases"]] == ["bwrap", "bwrap-fresh", "worker"]
    for phase in report["phases"]:
        assert phase["verdicts"] == 2 and phase["stages"] == {"correct": 2}, phase
        assert phase["incorrect"] == []  # an incorrect verdict's task and feedback would be listed
        assert phase["verdicts_per_min"] > 0
        # the parts a verdict's wall holds are consecutive: their sum never exceeds it
        assert 0 <= phase["unaccounted_s_median"] < phase["verdict_wall_s_median"]
        assert phase["host"]["cores"] == os.cpu_count() and phase["host"]["busy_cores_mean"] > 0, phase["host"]
        if phase["mode"] != "bwrap":  # a fresh worker imports torch first: it outlives a sampling interval
            assert phase["host"]["cpu_s"].get("worker", 0) > 0, phase["host"]
        # a sandboxed worker forked from the pre-imported zygote may not (host_load's docstring)
        # the batch is the search policy's first turn: its best-of-N metrics, one trajectory per sample
        metrics = phase["best_of_n"]["tasks"]["vector_add_fp32"]
        assert metrics["candidates"] == 2 and metrics["correct_rate"] == 1.0 and metrics["pass_at_k"] == [1.0, 1.0]
        assert len(metrics["best_of_k_reward"]) == 2 and "best_of_k_speedup" not in metrics  # CPU: untimed
    assert report["command"].startswith("python -m bench.search --device cpu --tasks vector_add_fp32 --n 2")
    table = search_throughput([Loaded("bs.json", report)])
    assert len(table) == 5 and table[2].startswith("| bwrap | 2 | 2 | correct 2 |")
    assert table[3].startswith("| bwrap-fresh | 1 | 2 | correct 2 |"), table[3]
    assert table[0].count("|") == 16 and table[2].count("|") == 16 and " of " in table[2]
    # the worker's and the replay's CPU split into start-up and job, from the verdicts' profiles
    assert re.search(r"\| \d+\.\d / \d+\.\d; \d+\.\d / \d+\.\d \|$", table[2]), table[2]


def test_the_batch_is_the_search_policys_first_turn():
    jobs = bench_search.search_batch(["vector_add_fp32"], 3)
    assert [t for t, _ in jobs] == ["vector_add_fp32"] * 3
    assert len({s for _, s in jobs}) == 3 and all("class ModelNew" in s for _, s in jobs)


@pytest.mark.parametrize("bad", ["bwrap", "sandbox:2", "off:0", "off:x", "bwrap+sometimes:2"])
def test_a_bad_phase_is_refused(bad):
    with pytest.raises(ValueError):
        bench_search.parse_phase(bad)


def test_a_phase_names_its_mode_its_workers_and_its_cuda_schedule():
    assert bench_search.parse_phase("bwrap:8") == ("bwrap", 8, None)
    assert bench_search.parse_phase("off+yield:4") == ("off", 4, "yield")


def test_a_phase_lists_its_incorrect_verdicts_and_each_errors_last_line(tmp_path):
    from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator
    from hawkeye_env.judge.parent.store import ResultStore
    from hawkeye_env.tasks.registry import get_task, solution_source

    good = solution_source(get_task("vector_add_fp32"))
    wrong = good.replace("tl.load(b_ptr", "-tl.load(b_ptr")
    raising = good.replace("-> torch.Tensor:", "-> torch.Tensor:\n        raise ValueError('no such tile')", 1)
    assert raising != good and wrong != good
    evaluator = Evaluator(ResultStore(str(tmp_path / "s.sqlite3")), EvalConfig(timeout_s=20.0))
    jobs = [("vector_add_fp32", good), ("vector_add_fp32", wrong), ("vector_add_fp32", raising)]
    phase = bench_search.run_phase(evaluator, jobs, "cpu", "worker", 2)
    assert phase["stages"] == {"correct": 1, "incorrect": 1, "runtime_error": 1}, phase
    assert len(phase["incorrect"]) == 1 and phase["incorrect"][0].startswith("vector_add_fp32: ")
    assert "does not match" in phase["incorrect"][0]
    # the exception's own line, not the traceback's first: what went wrong is readable in the report
    assert any("ValueError: no such tile" in e for e in phase["errors"]), phase["errors"]
