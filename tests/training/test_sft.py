"""Smoke test: the real SFT recipe, 2 steps on the tiny local model, CPU, offline W&B, the loss on
the held-out tasks' experts evaluated after training."""

import json

import torch
from transformers import AutoModelForCausalLM

from hawkeye_env.registration import KERNEL_OPT_ID
from reward import REWARD_VERSION
from training.config import TrainConfig
from training.sft import train


def test_sft_two_steps_change_parameters_and_write_an_offline_wandb_run(tiny_model, tmp_path):
    before = {k: v.clone() for k, v in AutoModelForCausalLM.from_pretrained(tiny_model).state_dict().items()}
    out = tmp_path / "sft"
    config = TrainConfig(model=tiny_model, output_dir=str(out), context="none", max_steps=2, batch_size=2,
                         learning_rate=1e-3, max_length=4096, device="cpu", save_steps=1000,
                         # short experts (~2,900 tiny-tokenizer tokens with their prompt), so the held-out
                         # one fits max_length: TRL drops an example whose completion is cut off
                         tasks=["vector_add_fp32", "softmax_fp32", "rmsnorm_bf16", "swiglu_bf16"])
    trainer = train(config)

    after = trainer.model.state_dict()
    assert any(not torch.equal(before[k], after[k].cpu()) for k in before)
    assert trainer.state.global_step == 2
    assert any("loss" in h for h in trainer.state.log_history)
    assert list((out / "wandb").glob("offline-run-*")), "no offline W&B run folder"
    meta = json.loads((out / "run_metadata.json").read_text())
    assert meta["env_id"] == KERNEL_OPT_ID and meta["reward_version"] == REWARD_VERSION
    assert meta["recipe"] == "sft" and meta["split"]["eval"] and meta["config"]["context"] == "none"
    assert meta["run_name"].startswith("sft-sft-") and meta["chat_template"] == "the model's own"
    assert any("eval_loss" in h for h in trainer.state.log_history)  # the held-out split's experts, after training
    assert (out / "model.safetensors").exists()
