"""Multi-turn GRPO out of the box, on a model whose chat template has no tool calling (as
SmolLM2-135M-Instruct's, a plain ChatML one): the recipe supplies TRL's tool-capable template and
says so (a warning, ``run_metadata.json``, the saved tokenizer), keeps ``rollouts.jsonl``, the W&B
rollouts table and the judge rates as single-turn does, evaluates the recorded held-out split, and
puts hawkeye's config in the W&B run under a name of its own. The random tiny model never calls the
tool, so every rollout is a no-submission episode (reward -1, nothing judged): what is checked is
the bookkeeping, on the real recipe."""

import json
import logging
import re

import pytest
from transformers import AutoTokenizer
from trl.chat_template_utils import supports_tool_calling
from wandb.sdk import wandb_config

from training.config import TrainConfig
from training.grpo import train
from training.recipe_options import SUPPLIED_TEMPLATE

# SmolLM2-135M-Instruct's template less its default system line: ChatML turns, no tool calling.
PLAIN_CHATML = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + "
                "'<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}"
                "{% endif %}")


@pytest.fixture
def plain_template_model(tiny_model, tmp_path) -> str:
    """The tiny model with ``PLAIN_CHATML`` as its chat template."""
    from transformers import AutoModelForCausalLM

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    tokenizer.chat_template = PLAIN_CHATML
    assert not supports_tool_calling(tokenizer)
    path = tmp_path / "plain"
    tokenizer.save_pretrained(path)
    AutoModelForCausalLM.from_pretrained(tiny_model).save_pretrained(path)
    return str(path)


def test_multi_turn_grpo_supplies_a_tool_template_and_keeps_rollouts_metrics_and_held_out_eval(
        plain_template_model, tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    out = tmp_path / "mt"
    config = TrainConfig(model=plain_template_model, output_dir=str(out), context="none", max_steps=1,
                         batch_size=4, num_generations=4, max_completion_length=8, device="cpu", judge_device="cpu",
                         store=":memory:", multi_turn=True, max_turns=2, save_steps=1000,
                         extra={"gradient_checkpointing": False})  # generation keeps its KV cache
    updates = []  # every update of the W&B run's config
    update = wandb_config.Config.update
    monkeypatch.setattr(wandb_config.Config, "update", lambda self, d, *a, **k: (updates.append(dict(d)),
                                                                               update(self, d, *a, **k))[1])
    with caplog.at_level(logging.WARNING, logger="training.recipe_options"):
        trainer = train(config, split={"train": ["vector_add_fp32"], "eval": ["rmsnorm_bf16"]})

    assert "has no tool calling" in caplog.text and "Qwen2.5" in caplog.text
    meta = json.loads((out / "run_metadata.json").read_text())
    assert meta["chat_template"] == SUPPLIED_TEMPLATE and meta["split"]["eval"] == ["rmsnorm_bf16"]
    assert re.fullmatch(r"grpo-mt-\d{8}-\d{6}-[0-9a-f]{6}", meta["run_name"])
    assert supports_tool_calling(AutoTokenizer.from_pretrained(out))  # the checkpoint keeps the template

    rows = [json.loads(line) for line in (out / "rollouts.jsonl").read_text().splitlines()]
    assert [(r["split"], r["task"]) for r in rows] == [("train", "vector_add_fp32")] * 4 + [
        ("eval", "rmsnorm_bf16")] * 4
    assert all(r["stage"] == "no_source" and r["reward"] == -1.0 and r["submissions"] == [] for r in rows)
    train_log = next(h for h in trainer.state.log_history if "reward" in h)
    assert train_log["judge/no_source_rate"] == 1.0 and train_log["judge/compile_rate"] == 0.0
    assert train_log["rewards/hawkeye_episode_reward/mean"] == -1.0
    eval_log = next(h for h in trainer.state.log_history if "eval_reward" in h)
    assert eval_log["eval_judge/no_source_rate"] == 1.0 and eval_log["eval_reward"] == -1.0

    [run] = (out / "wandb").glob("offline-run-*")
    [table] = run.glob("files/media/table/rollouts_*.table.json")
    assert len(json.loads(table.read_text())["data"]) == 8
    [hawkeye] = [u["hawkeye"] for u in updates if "hawkeye" in u]
    assert hawkeye["split"] == meta["split"] and hawkeye["config"]["multi_turn"] is True
    assert hawkeye["run_name"] == meta["run_name"] and hawkeye["reward_version"] == meta["reward_version"]
