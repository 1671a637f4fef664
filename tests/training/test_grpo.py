"""Smoke test: the real single-turn GRPO recipe, 2 steps on the tiny model, rewards from the evaluator.

The tiny random model never writes a module, so all its completions score -1 and GRPO's advantages
are 0 (no gradient). To see gradients flow, the test's reward function hands the real reward
function the expert solution in place of every other completion: each group then mixes a correct
candidate (0.2 from the evaluator) with no-source ones (-1.0), and the evaluator still judges it.
"""

import json
import os

import torch
from transformers import AutoModelForCausalLM

from hawkeye_env.judge.parent.evaluator import Evaluator
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.tasks.registry import get_task, solution_source
from training.config import TrainConfig
from training.data import fenced
from training.grpo import train
from training.reward import make_reward_func


def test_grpo_two_steps_rewards_from_the_evaluator(tiny_model, tmp_path):
    judge = make_reward_func(Evaluator(ResultStore(":memory:")), device="cpu", workers=2,
                             rollouts_path=tmp_path / "grpo" / "rollouts.jsonl")
    completions_seen = []

    def every_other_is_the_solution(prompts, completions, task, **kwargs):
        completions_seen.extend(completions)
        swapped = [fenced(solution_source(get_task(t))) if i % 2 == 0 else c
                   for i, (t, c) in enumerate(zip(task, completions))]
        return judge(prompts=prompts, completions=swapped, task=task, **kwargs)

    before = {k: v.clone() for k, v in AutoModelForCausalLM.from_pretrained(tiny_model).state_dict().items()}
    config = TrainConfig(model=tiny_model, output_dir=str(tmp_path / "grpo"), context="none", max_steps=2,
                         batch_size=4, num_generations=4, max_completion_length=16, learning_rate=1e-2,
                         device="cpu", judge_device="cpu", save_steps=1000,
                         # vector_add_fp32 and rmsnorm_bf16 only: the CPU interpreter judges them in seconds.
                         eval_fraction=0.0)
    trainer = train(config, split={"train": ["vector_add_fp32", "rmsnorm_bf16"], "eval": []},
                    reward_func=every_other_is_the_solution)

    assert len(completions_seen) == 8
    assert judge.stats.calls == 2 and judge.stats.completions == 8
    assert judge.stats.correct >= 1 and judge.stats.no_source >= 1
    logs = [h for h in trainer.state.log_history if "reward" in h]
    assert len(logs) == 2
    assert all(0.0 < h["judge/correct_rate"] < 1.0 and "judge/compile_rate" in h for h in logs)
    after = trainer.model.state_dict()
    assert any(not torch.equal(before[k], after[k].cpu()) for k in before)
    assert list((tmp_path / "grpo" / "wandb").glob("offline-run-*"))
    rows = [json.loads(line) for line in (tmp_path / "grpo" / "rollouts.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [0] * 4 + [1] * 4 and {r["stage"] for r in rows} >= {"correct", "no_source"}
    assert list((tmp_path / "grpo" / "wandb").glob("offline-run-*/files/media/table/rollouts_*.table.json"))


def test_wandb_follows_its_own_configuration(tmp_path, monkeypatch):
    from training.config import wandb_offline_unless_keyed

    config = TrainConfig(output_dir=str(tmp_path / "run"))
    monkeypatch.setenv("WANDB_DIR", str(tmp_path / "mine"))
    monkeypatch.setenv("WANDB_MODE", "disabled")
    wandb_offline_unless_keyed(config)
    assert os.environ["WANDB_DIR"] == str(tmp_path / "mine") and os.environ["WANDB_MODE"] == "disabled"
    monkeypatch.delenv("WANDB_DIR")
    monkeypatch.delenv("WANDB_MODE")
    monkeypatch.setenv("WANDB_API_KEY", "x" * 40)
    wandb_offline_unless_keyed(config)
    assert os.environ["WANDB_DIR"] == str((tmp_path / "run").resolve()) and "WANDB_MODE" not in os.environ


def test_a_bf16_checkpoint_loads_with_float32_master_weights(tiny_model, tmp_path):
    from transformers import AutoModelForCausalLM

    from training.config import load_policy_model

    AutoModelForCausalLM.from_pretrained(tiny_model, dtype=torch.bfloat16).save_pretrained(tmp_path / "bf16")
    model = load_policy_model(TrainConfig(model=str(tmp_path / "bf16")))
    assert {p.dtype for p in model.parameters()} == {torch.float32}


def test_a_lora_run_trains_its_adapter_and_resumes_on_its_recorded_split(tiny_model, tmp_path):
    from peft import PeftModel

    from training.reward import completion_text

    def by_text(prompts, completions, **kwargs):  # no judge: rewards that differ, so gradients flow
        # by the text, not its length: completions clipped at max_completion_length all have one length
        return [float(sum(map(ord, completion_text(c))) % 7) for c in completions]

    out = tmp_path / "lora"
    fields = dict(model=tiny_model, output_dir=str(out), context="none", batch_size=2, num_generations=2,
                  max_completion_length=6, learning_rate=1e-2, device="cpu", judge_device="cpu", report_to="none",
                  tasks=["vector_add_fp32", "rmsnorm_bf16"], eval_fraction=0.5, eval_steps=-1, save_steps=1,
                  use_peft=True, lora_r=4, lora_target_modules=["q_proj", "v_proj"],
                  extra={"gradient_checkpointing": False})
    first = train(TrainConfig(max_steps=1, **fields), reward_func=by_text)
    split = json.loads((out / "run_metadata.json").read_text())["split"]
    assert isinstance(first.model, PeftModel) and (out / "checkpoint-1" / "adapter_config.json").exists()
    lora_b = {k: v for k, v in first.model.state_dict().items() if "lora_B" in k}
    assert lora_b and any(v.abs().sum() > 0 for v in lora_b.values())  # LoRA's B starts at zero: it trained
    base = AutoModelForCausalLM.from_pretrained(tiny_model).state_dict()
    merged_free = {k.replace("base_model.model.", "").replace(".base_layer", ""): v
                   for k, v in first.model.state_dict().items() if "lora_" not in k}
    assert all(torch.equal(base[k], merged_free[k].cpu()) for k in base if k in merged_free)  # base untouched

    # a different split seed: the resumed run still trains on the split its first part recorded
    second = train(TrainConfig(max_steps=2, resume_from_checkpoint="latest", split_seed=7, **fields),
                   reward_func=by_text)
    assert second.state.global_step == 2 and json.loads((out / "run_metadata.json").read_text())["split"] == split
    assert [h["step"] for h in second.state.log_history if "reward" in h] == [1, 2]
    assert (out / "adapter_model.safetensors").exists() and not (out / "model.safetensors").exists()
