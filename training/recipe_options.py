"""What both recipes hand TRL besides the config: the run's name, its task split (the recorded one
on resume), the chat template, the LoRA config, the checkpoint to resume, and hawkeye's own config
in W&B. Each is TRL's own feature (``get_peft_config``, ``resume_from_checkpoint``, a
``TrainerCallback``), set from ``TrainConfig``. Example::

    split = run_split(config)                        # the recorded split when resuming
    args = GRPOConfig(run_name=run_name(config, "grpo"), ...)
    trainer = GRPOTrainer(..., peft_config=peft_config(config), callbacks=[WandbRunConfig(record)])
    trainer.train(resume_from_checkpoint=resume_checkpoint(config))
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from uuid import uuid4

from training.checks import ConfigError
from training.config import TrainConfig
from training.data import split_tasks

logger = logging.getLogger(__name__)

#: What ``run_metadata.json`` records as the chat template when TRL's Qwen2.5 template replaced a
#: model's template that has no tool calling (SmolLM2's, for one).
SUPPLIED_TEMPLATE = "trl qwen2_5 (ChatML with tool calls; the model's own template has no tool calling)"


def run_name(config: TrainConfig, recipe: str) -> str:
    """``config.run_name``, else ``<recipe>-<output_dir name>-<UTC time>-<6 hex digits>``: each run,
    a resumed one included, its own name (two started in the same second differ by the suffix)."""
    if config.run_name:
        return config.run_name
    return f"{recipe}-{Path(config.output_dir).name}-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{uuid4().hex[:6]}"


def run_split(config: TrainConfig) -> dict[str, list[str]]:
    """The task split: the one ``run_metadata.json`` recorded when resuming (so a resumed run trains
    and evaluates on the same tasks), else ``split_tasks`` of the config's tasks and held-out tasks
    (``split:train``, ``split:validation``), or of its seed and fraction."""
    meta = Path(config.output_dir) / "run_metadata.json"
    if config.resume_from_checkpoint and meta.exists():
        return json.loads(meta.read_text(encoding="utf-8"))["split"]
    return split_tasks(config.split_seed, config.eval_fraction, config.tasks or None, config.eval_tasks or None)


def resume_checkpoint(config: TrainConfig) -> str | bool | None:
    """``Trainer.train``'s ``resume_from_checkpoint``: a folder, ``True`` for ``latest`` (the newest
    ``checkpoint-*`` in ``output_dir``), ``None`` for a fresh run."""
    if not config.resume_from_checkpoint:
        return None
    return True if config.resume_from_checkpoint == "latest" else config.resume_from_checkpoint


def peft_config(config: TrainConfig):
    """The LoRA config TRL builds from the ``lora_*`` fields (``trl.get_peft_config``); None without ``use_peft``."""
    if not config.use_peft:
        return None
    from trl import ModelConfig, get_peft_config

    targets = config.lora_target_modules or None
    return get_peft_config(ModelConfig(use_peft=True, lora_r=config.lora_r, lora_alpha=config.lora_alpha,
                                       lora_dropout=config.lora_dropout, lora_target_modules=targets))


def chat_template(tokenizer, config: TrainConfig, needs_tools: bool) -> str:
    """Set ``tokenizer``'s chat template for the run and say which it is: ``config.chat_template``
    when given; TRL's Qwen2.5 template (``SUPPLIED_TEMPLATE``, logged as a warning) when the run
    calls tools and the model's template cannot render a tool call; else the model's own."""
    from trl.chat_template_utils import qwen2_5_chat_template, supports_tool_calling

    if config.chat_template:
        tokenizer.chat_template = Path(config.chat_template).read_text(encoding="utf-8")
        if needs_tools and not supports_tool_calling(tokenizer):
            raise ConfigError(f"--chat_template {config.chat_template}: the template cannot render a tool call, "
                              "which multi-turn GRPO needs")
        return config.chat_template
    if needs_tools and (tokenizer.chat_template is None or not supports_tool_calling(tokenizer)):
        tokenizer.chat_template = qwen2_5_chat_template
        logger.warning("The chat template of %s has no tool calling: multi-turn GRPO uses TRL's Qwen2.5 template "
                       "(ChatML turns, tool calls in <tool_call> tags), saved with the checkpoints. Pass "
                       "--chat_template FILE to choose another.", config.model)
        return SUPPLIED_TEMPLATE
    return "the model's own"


def load_policy(config: TrainConfig):
    """``(tokenizer, model)`` of ``config.model`` (float32 master weights); a model that cannot be
    loaded (not found, offline with no local copy, not a causal LM) is a ``ConfigError`` naming it."""
    from training.config import load_policy_model, load_tokenizer

    try:
        return load_tokenizer(config), load_policy_model(config)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"--model {config.model}: could not be loaded ({exc})") from exc


def wandb_run_config(record: dict):
    """A ``TrainerCallback`` that adds ``record`` (``training.config.run_record``: hawkeye's config,
    split, env and reward versions) to the W&B run's config under ``hawkeye`` once the run starts."""
    from transformers import TrainerCallback

    class WandbRunConfig(TrainerCallback):
        def on_train_begin(self, args, state, control, **kwargs):
            import wandb

            if wandb.run is not None:
                wandb.config.update({"hawkeye": record}, allow_val_change=True)

    return WandbRunConfig()


__all__ = ["SUPPLIED_TEMPLATE", "chat_template", "load_policy", "peft_config", "resume_checkpoint", "run_name",
           "run_split",
           "wandb_run_config"]
