"""``hawkeye throughput`` (``evals/throughput.py``, ``hawkeye_env/cli_throughput.py``): a real CPU
batch's stage breakdown, the arithmetic of the report on made-up profiles, and bad inputs refused
with a message."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from evals.throughput import STAGES, report, stage_seconds
from hawkeye_env.cli import app
from hawkeye_env.cli_throughput import candidate_jobs
from hawkeye_env.judge.shared.verdict import Stage, Verdict
from hawkeye_env.tasks.registry import get_task, solution_source


def _v(profile: dict, stage=Stage.CORRECT) -> Verdict:
    return Verdict(task="t", device="cuda", stage=stage, profile=profile)


def test_stage_seconds_sum_the_profile_keys_of_each_stage():
    got = stage_seconds({"lane_wait_s": 1.0, "replay.lane_wait_s": 2.0, "replay.trials_s": 3.0, "other": 9.0})
    assert got["queueing"] == 3.0 and got["correctness"] == 3.0 and sum(got.values()) == 6.0
    assert set(got) == set(STAGES)


def test_the_report_gives_rates_shares_and_the_busy_fraction():
    vs = [_v({"replay.timing_s": 1.0, "replay.trials_s": 3.0}), _v({"replay.timing_s": 3.0, "replay.trials_s": 1.0},
                                                                     Stage.INCORRECT)]
    r = report(vs, wall_s=60.0, gpus=2, device="cuda", sampled_busy=None)
    assert r["verdicts_per_minute"] == 2.0 and r["verdicts_per_gpu_minute"] == 1.0
    assert r["stages"]["timed section"]["total_s"] == 4.0 and r["stages"]["timed section"]["share"] == 0.5
    assert r["gpu_busy"] == pytest.approx(4.0 / 120.0) and r["busy_source"] == "timed sections"
    assert r["stages_by_outcome"] == {"correct": 1, "incorrect": 1}
    assert report(vs, 60.0, 2, "cuda", sampled_busy=0.7)["busy_source"] == "nvml"
    assert "gpu_busy" not in report(vs, 60.0, 1, "cpu", None)


def test_candidate_files_name_their_task_or_are_refused(tmp_path):
    (tmp_path / "vector_add_fp32__a.py").write_text("x = 1\n")
    jobs = candidate_jobs([tmp_path], None, copies=2)
    assert [t for t, _ in jobs] == ["vector_add_fp32"] * 2 and jobs[0][1] != jobs[1][1]
    (tmp_path / "nameless.py").write_text("x = 1\n")
    with pytest.raises(ValueError, match="nameless.py"):
        candidate_jobs([tmp_path], None, 1)


def test_a_cpu_batch_reports_where_its_time_went(tmp_path):
    (tmp_path / "vector_add_fp32__expert.py").write_text(solution_source(get_task("vector_add_fp32")))
    out = tmp_path / "t.json"
    result = CliRunner().invoke(app, ["throughput", str(tmp_path), "--device", "cpu", "--copies", "2",
                                      "--store", str(tmp_path / "s.sqlite3"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    r = json.loads(out.read_text())
    assert r["verdicts"] == r["judged_fresh"] == 2 and r["stages_by_outcome"] == {"correct": 2}
    assert r["stages"]["recording"]["total_s"] > 0 and r["stages"]["correctness"]["total_s"] > 0
    assert abs(sum(s["share"] for s in r["stages"].values()) - 1.0) < 1e-9
    assert "verdicts per minute" in result.output


def test_an_unknown_task_is_refused_with_a_message(tmp_path):
    (tmp_path / "no_such_task__x.py").write_text("x = 1\n")
    result = CliRunner().invoke(app, ["throughput", str(tmp_path), "--device", "cpu"])
    assert result.exit_code == 2 and "no_such_task" in result.output
