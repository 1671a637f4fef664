"""Smoke test: the real SFT recipe, 2 steps on the tiny local model, CPU, offline W&B."""

import json

import torch
from transformers import AutoModelForCausalLM

from training.config import TrainConfig
from training.sft import train


def test_sft_two_steps_change_parameters_and_write_an_offline_wandb_run(tiny_model, tmp_path):
    before = {k: v.clone() for k, v in AutoModelForCausalLM.from_pretrained(tiny_model).state_dict().items()}
    out = tmp_path / "sft"
    config = TrainConfig(model=tiny_model, output_dir=str(out), context="none", max_steps=2, batch_size=2,
                         learning_rate=1e-3, max_length=2048, device="cpu", save_steps=1000)
    trainer = train(config)

    after = trainer.model.state_dict()
    assert any(not torch.equal(before[k], after[k].cpu()) for k in before)
    assert trainer.state.global_step == 2
    assert any("loss" in h for h in trainer.state.log_history)
    assert list((out / "wandb").glob("offline-run-*")), "no offline W&B run folder"
    meta = json.loads((out / "run_metadata.json").read_text())
    assert meta["env_id"] == "hawkeye/KernelOpt-v3" and meta["reward_version"] == "v3"
    assert meta["recipe"] == "sft" and meta["split"]["eval"] and meta["config"]["context"] == "none"
    assert (out / "model.safetensors").exists()
