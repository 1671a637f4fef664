"""Every adapter names its tasks as the env does (``select_tasks``): a split gives exactly that
split's tasks, with nothing of another split, and an unknown split raises before any episode starts.
The verifiers taskset is loaded by its id (as ``vf-eval --env.taskset.tasks '["split:validation"]'``
loads it), veRL's and SkyRL's dataset rows are built from a split, and a SkyRL env on a row's task
prompts as the row does."""

from __future__ import annotations

import pytest

from hawkeye_env.adapters.verl import verl_rows


def _ids(splits: dict[str, str], name: str) -> list[str]:
    return sorted(i for i, s in splits.items() if s == name)


def test_the_verifiers_taskset_takes_a_split(generated_splits):
    vf = pytest.importorskip("verifiers.v1", reason="pip install 'hawkeye-env[verifiers]'")
    from hawkeye_env.adapters.verifiers_env import TASKSET_ID, load_environment

    env = vf.load_environment(vf.resolve_env_config({"taskset": {"id": TASKSET_ID, "tasks": ["split:validation"],
                                                                 "context": "none"}}))
    assert sorted(t.data.task_id for t in env.taskset) == _ids(generated_splits, "validation")
    train = load_environment(tasks="split:train", context="none")
    assert sorted(t.data.task_id for t in train.taskset) == _ids(generated_splits, "train")
    with pytest.raises(KeyError, match="unknown split 'holdout'"):
        load_environment(tasks="split:holdout")


def test_verl_rows_take_a_split_and_label_each_row_with_its_tasks_split(generated_splits):
    rows = verl_rows("split:train", context="none")
    assert sorted(r["reward_model"]["ground_truth"] for r in rows) == _ids(generated_splits, "train")
    assert {r["extra_info"]["split"] for r in rows} == {"train"} and [r["extra_info"]["index"] for r in rows] == [0, 1]
    [curated] = verl_rows(["vector_add_fp32"], context="none")
    assert curated["extra_info"]["split"] == "test"
    assert verl_rows(["vector_add_fp32"], context="none", split="train")[0]["extra_info"]["split"] == "train"
    with pytest.raises(KeyError, match="unknown split 'holdout'"):
        verl_rows("split:holdout")


def test_skyrl_rows_take_a_split_and_its_env_prompts_as_the_row(generated_splits):
    skyrl_gym = pytest.importorskip("skyrl_gym", reason="pip install 'hawkeye-env[skyrl]'")
    from hawkeye_env.adapters import skyrl as adapter

    rows = adapter.skyrl_rows(["split:validation"], context="none")
    assert sorted(r["reward_spec"]["ground_truth"] for r in rows) == _ids(generated_splits, "validation")
    assert {r["env_class"] for r in rows} == {adapter.ENV_ID} and {r["extra_info"]["split"] for r in rows} == {
        "validation"}
    adapter.register()
    env = skyrl_gym.make(adapter.ENV_ID, env_config={"context": "none"}, extras=rows[0])
    messages, info = env.init([])
    assert messages == rows[0]["prompt"] and info["task"] == rows[0]["reward_spec"]["ground_truth"]
    env.close()
    with pytest.raises(KeyError, match="unknown split 'holdout'"):
        adapter.skyrl_rows("split:holdout")
