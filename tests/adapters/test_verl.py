"""veRL's reward function: its exact signature, the judge's rewards, the batch form judged in shared
batches (a bad row scored apart, every other row kept), and the dataset rows carrying the env's
prompt."""

from __future__ import annotations

import inspect
import json

import pytest

from hawkeye_env.adapters.verl import BAD_ROW_SCORE, compute_score, compute_score_batch, verl_rows
from hawkeye_env.env import KernelOptEnv
from tests.adapters.conftest import BROKEN, SOLUTION, TASK, fenced


def test_signatures_are_verls():
    assert list(inspect.signature(compute_score).parameters) == ["data_source", "solution_str", "ground_truth",
                                                                  "extra_info"]
    assert inspect.signature(compute_score).parameters["extra_info"].default is None
    assert list(inspect.signature(compute_score_batch).parameters) == ["data_sources", "solution_strs",
                                                                        "ground_truths", "extra_infos"]


def test_compute_score_is_the_envs_first_turn_reward():
    good = compute_score("hawkeye/KernelOpt-v3", fenced(SOLUTION), TASK, {"index": 0})
    assert good["score"] == pytest.approx(0.2) and good["stage"] == "correct" and good["correct"] is True
    assert compute_score("hawkeye/KernelOpt-v3", "I cannot", TASK)["score"] == -1.0
    with pytest.raises(KeyError, match="unknown task"):
        compute_score("hawkeye/KernelOpt-v3", fenced(SOLUTION), "no_such_task")


def test_batch_form_judges_together(cpu_judge):
    before = cpu_judge.status()
    replies = [fenced(BROKEN), fenced(SOLUTION + "# batch\n"), "prose", fenced(BROKEN + "# batch\n")]
    scores = compute_score_batch(["hawkeye/KernelOpt-v3"] * 4, replies, [TASK] * 4, extra_infos=[None] * 4)
    assert [s["score"] for s in scores] == [-0.5, pytest.approx(0.2), -1.0, -0.5]
    after = cpu_judge.status()
    assert after["submitted"] - before["submitted"] == 3  # the prose reply never reaches the judge
    assert after["batches"] - before["batches"] < 3
    with pytest.raises(ValueError, match="one entry per response"):
        compute_score_batch(["x"], replies, [TASK])


def test_batch_form_keeps_every_other_score_when_one_row_is_bad():
    replies = [fenced(SOLUTION), fenced(SOLUTION), None, fenced(BROKEN)]
    scores = compute_score_batch(["hawkeye/KernelOpt-v3"] * 4, replies, [TASK, "no_such_task", TASK, TASK])
    assert [s["score"] for s in scores] == [pytest.approx(0.2), BAD_ROW_SCORE, BAD_ROW_SCORE, -0.5]
    assert [s["stage"] for s in scores] == ["correct", "bad_row", "bad_row", "incorrect"]
    assert "unknown task 'no_such_task'" in scores[1]["error"] and "must be text" in scores[2]["error"]
    assert scores[0]["error"] == "" and {frozenset(s) for s in scores} == {frozenset(scores[0])}  # one key set


def test_rows_carry_the_envs_prompt_and_the_task_as_ground_truth():
    [row] = verl_rows([TASK], context="docs")
    env = KernelOptEnv(tasks=[TASK], store=":memory:", device="cpu", context="docs")
    assert row["prompt"] == json.loads(env.reset(options={"task": TASK})[0]["messages"])
    assert row["reward_model"] == {"style": "rule", "ground_truth": TASK}
    assert row["data_source"] == "hawkeye/KernelOpt-v3"
    env.close()
