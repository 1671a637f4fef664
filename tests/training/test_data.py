"""The SFT/GRPO data is the env's own prompt, and task splits hold whole tasks out, deterministically."""

import json

import pytest

from hawkeye_env.edits import to_candidate
from hawkeye_env.env import KernelOptEnv
from hawkeye_env.tasks.registry import get_task, list_tasks, solution_source
from training.data import grpo_prompts, sft_examples, split_tasks
from units.lib.index import CONTEXT_MODES


@pytest.mark.parametrize("context", CONTEXT_MODES)
def test_task_prompts_are_the_env_observation(context):
    ids = [s.id for s in list_tasks()]
    rows = {r["task"]: r for r in sft_examples(ids, context, include_units=False, device="cpu")}
    env = KernelOptEnv(tasks=ids, store=":memory:", device="cpu", context=context)
    for task_id in ids:
        obs, _ = env.reset(options={"task": task_id})
        assert rows[task_id]["prompt"] == json.loads(obs["messages"])
        assert rows[task_id]["prompt_text"] == obs["prompt"]
    env.close()
    gp = {r["task"]: r["prompt"] for r in grpo_prompts(ids, context, device="cpu")}
    assert all(gp[t] == rows[t]["prompt"] for t in ids)


def test_task_completion_is_the_expert_solution():
    row = sft_examples(["vector_add_fp32"], "none", include_units=False, device="cpu")[0]
    answer = row["completion"][0]["content"]
    assert row["completion"][0]["role"] == "assistant" and answer == row["completion_text"]
    assert to_candidate(None, answer) == solution_source(get_task("vector_add_fp32"))


def test_unit_examples_answer_with_the_unit_kernel():
    units = [r for r in sft_examples([], "docs", device="cpu") if r["kind"] == "unit"]
    assert len(units) >= 10
    row = next(r for r in units if r["task"] == "row_reduction")
    assert "Strategy:" in row["prompt"][1]["content"] and "units.row_reduction.reference" in row["prompt"][1]["content"]
    from units.lib.index import get_unit, unit_file
    assert to_candidate(None, row["completion_text"]) == unit_file(get_unit("row_reduction"), "kernel.py")


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_split_holds_tasks_out_deterministically(seed):
    ids = {s.id for s in list_tasks()}
    split = split_tasks(seed, 0.25)
    assert split == split_tasks(seed, 0.25)
    assert split["eval"] and split["train"]
    assert not set(split["train"]) & set(split["eval"])
    assert set(split["train"]) | set(split["eval"]) == ids
    rows = sft_examples(split["train"], "none", device="cpu")
    assert not {r["task"] for r in rows if r["kind"] == "task"} & set(split["eval"])


def test_split_depends_on_seed_and_checks_fraction():
    names = sorted(s.id for s in list_tasks())[:20]
    splits = {tuple(split_tasks(seed, 0.25, names)["eval"]) for seed in range(5)}
    assert len(splits) > 1
    assert len(split_tasks(0, 0.25, names)["eval"]) == 5
    assert split_tasks(0, 0.0, names)["eval"] == []
    with pytest.raises(ValueError):
        split_tasks(0, 1.0, names)


def test_task_option_restricts_the_split_and_rejects_unknown_ids():
    from typer.testing import CliRunner

    from hawkeye_env.cli import app
    from training.cli import _task_list

    assert _task_list(" vector_add_fp32, softmax_fp32 ") == ("vector_add_fp32", "softmax_fp32")
    split = split_tasks(0, 0.5, _task_list("vector_add_fp32,softmax_fp32"))
    assert sorted(split["train"] + split["eval"]) == ["softmax_fp32", "vector_add_fp32"]
    result = CliRunner().invoke(app, ["train", "sft", "--model", "unused", "--tasks", "vector_add_fp32,nope"])
    assert result.exit_code == 2
    assert "unknown task 'nope'" in result.output


def test_tiny_model_command_line_sets_the_size(tmp_path, capsys):
    from transformers import AutoConfig

    from training.tiny_model import main

    main([str(tmp_path / "m"), "--hidden-size", "32", "--layers", "1", "--vocab-size", "600"])
    config = AutoConfig.from_pretrained(tmp_path / "m")
    assert (config.hidden_size, config.num_hidden_layers) == (32, 1)
    assert str(tmp_path / "m") in capsys.readouterr().out


def test_every_config_field_has_a_flag_and_a_yaml_key(tmp_path):
    from dataclasses import fields

    from training.args import field_help, parse_config
    from training.config import TrainConfig

    assert set(field_help()) == {f.name for f in fields(TrainConfig)}
    path = tmp_path / "grpo.yaml"
    path.write_text("model: m\ntasks: [vector_add_fp32, softmax_fp32]\nlearning_rate: 1.0e-6\nmulti_turn: true\n"
                    "extra: {gradient_checkpointing: true}\n")
    config = parse_config(["--config", str(path), "--max_steps", "3", "--bf16", "--extra", '{"warmup_steps": 2}'])
    assert (config.model, config.tasks, config.learning_rate, config.multi_turn) == (
        "m", ["vector_add_fp32", "softmax_fp32"], 1e-6, True)
    assert config.max_steps == 3 and config.bf16 and config.extra == {"gradient_checkpointing": True, "warmup_steps": 2}
    assert parse_config(["--judge_timeout_s", "7", "--context_budget_chars", "500"]).judge_timeout_s == 7.0
