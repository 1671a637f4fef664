"""veRL's reward function: its exact signature, the judge's rewards, the batch form judged in shared
batches, and the dataset rows carrying the env's prompt."""

from __future__ import annotations

import inspect
import json

import pytest

from hawkeye_env.adapters.verl import compute_score, compute_score_batch, verl_rows
from hawkeye_env.env import KernelOptEnv
from tests.adapters.conftest import BROKEN, SOLUTION, TASK, fenced


def test_signatures_are_verls():
    assert list(inspect.signature(compute_score).parameters) == ["data_source", "solution_str", "ground_truth",
                                                                  "extra_info"]
    assert inspect.signature(compute_score).parameters["extra_info"].default is None
    assert list(inspect.signature(compute_score_batch).parameters) == ["data_sources", "solution_strs",
                                                                        "ground_truths", "extra_infos"]


def test_compute_score_is_the_envs_first_turn_reward():
    good = compute_score("hawkeye/KernelOpt-v2", fenced(SOLUTION), TASK, {"index": 0})
    assert good["score"] == pytest.approx(0.2) and good["stage"] == "correct" and good["correct"] is True
    assert compute_score("hawkeye/KernelOpt-v2", "I cannot", TASK)["score"] == -1.0
    with pytest.raises(KeyError, match="unknown task"):
        compute_score("hawkeye/KernelOpt-v2", fenced(SOLUTION), "no_such_task")


def test_batch_form_judges_together(cpu_judge):
    before = cpu_judge.status()
    replies = [fenced(BROKEN), fenced(SOLUTION + "# batch\n"), "prose", fenced(BROKEN + "# batch\n")]
    scores = compute_score_batch(["hawkeye/KernelOpt-v2"] * 4, replies, [TASK] * 4, extra_infos=[None] * 4)
    assert [s["score"] for s in scores] == [-0.5, pytest.approx(0.2), -1.0, -0.5]
    after = cpu_judge.status()
    assert after["submitted"] - before["submitted"] == 3  # the prose reply never reaches the judge
    assert after["batches"] - before["batches"] < 3
    with pytest.raises(ValueError, match="one entry per response"):
        compute_score_batch(["x"], replies, [TASK])


def test_rows_carry_the_envs_prompt_and_the_task_as_ground_truth():
    [row] = verl_rows([TASK], context="docs")
    env = KernelOptEnv(tasks=[TASK], store=":memory:", device="cpu", context="docs")
    assert row["prompt"] == json.loads(env.reset(options={"task": TASK})[0]["messages"])
    assert row["reward_model"] == {"style": "rule", "ground_truth": TASK}
    assert row["data_source"] == "hawkeye/KernelOpt-v2"
    env.close()
