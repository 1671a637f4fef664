"""The recipes take the project's task splits as the env does (``select_tasks``): ``--tasks
split:train --eval-tasks split:validation`` trains on the train split's tasks and holds out the
validation split's, with nothing of another split in either; an unknown split is a usage error."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from hawkeye_env.cli import app
from hawkeye_env.tasks.registry import registered_ids
from training.args import parse_config
from training.checks import ConfigError, check_config
from training.config import TrainConfig
from training.data import grpo_prompts, sft_examples, split_tasks
from training.recipe_options import run_split


def _ids(splits: dict[str, str], name: str) -> list[str]:
    return sorted(i for i, s in splits.items() if s == name)


def test_the_recipes_split_is_the_projects_split(generated_splits, tmp_path):
    train, validation = _ids(generated_splits, "train"), _ids(generated_splits, "validation")
    assert split_tasks(tasks="split:train", eval_tasks="split:validation") == {"train": train, "eval": validation}
    config = parse_config(["--model", "m", "--output_dir", str(tmp_path), "--tasks", "split:train",
                           "--eval_tasks", "split:validation"])
    assert config.tasks == ["split:train"] and run_split(config) == {"train": train, "eval": validation}
    curated = sorted(set(registered_ids()) - set(generated_splits))
    everything_else = split_tasks(eval_tasks=["split:validation"])  # tasks unset: every other task trains
    assert everything_else["train"] == sorted(train + curated) and everything_else["eval"] == validation
    by_fraction = split_tasks(seed=1, eval_fraction=0.5, tasks="split:train")
    assert sorted(by_fraction["train"] + by_fraction["eval"]) == train and len(by_fraction["eval"]) == 1
    assert [r["task"] for r in grpo_prompts(train, "none", device="cpu")] == train
    assert sft_examples(validation, "none", include_units=False, device="cpu") == []  # no expert to imitate


def test_split_tasks_refuses_a_shared_task_an_empty_training_set_and_an_unknown_split(generated_splits):
    with pytest.raises(ValueError, match="both trained on and held out"):
        split_tasks(tasks=["split:train", "split:validation"], eval_tasks="split:validation")
    with pytest.raises(ValueError, match="no task left to train on"):
        split_tasks(eval_tasks="split:train,split:validation,split:test")
    with pytest.raises(KeyError, match="unknown split 'holdout'"):
        split_tasks(tasks="split:holdout")


@pytest.mark.parametrize("fields,message", [
    ({"tasks": ["split:holdout"]}, "--tasks: unknown split 'holdout'; splits: train, validation, test"),
    ({"eval_tasks": ["split:valid"]}, "--eval_tasks: unknown split 'valid'"),
    ({"tasks": ["split:train"], "eval_tasks": ["split:train"]}, "--eval_tasks: 2 task(s) both trained on"),
])
def test_check_config_names_the_bad_split(generated_splits, tmp_path, fields, message):
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text("{}")
    with pytest.raises(ConfigError) as exc:
        check_config(TrainConfig(model=str(tmp_path / "m"), output_dir=str(tmp_path / "out"), **fields), "grpo")
    assert message in str(exc.value)


def test_the_command_line_refuses_an_unknown_split_and_one_with_no_task():
    result = CliRunner().invoke(app, ["train", "grpo", "--model", "m", "--tasks", "vector_add_fp32",
                                      "--eval-tasks", "split:heldout"])
    assert result.exit_code == 2 and "unknown split 'heldout'" in result.output
    result = CliRunner().invoke(app, ["train", "sft", "--model", "m", "--tasks", "split:train"])
    assert result.exit_code == 2 and "names no task" in result.output  # the curated tasks are all test
