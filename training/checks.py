"""Bad training arguments rejected before anything loads, each with a message that says what to change.

``check_config(config, recipe)`` raises ``ConfigError`` (a ``ValueError``) for the first problem it
finds: an unknown device, context or vLLM mode, a GRPO batch that does not hold whole groups, a
model path that does not exist, an unknown task id or split, a checkpoint to resume that is not there. The
command lines (``hawkeye train ...``, ``python -m training.args``) print the message and exit 2; the
recipes call it first, so a script calling ``training.grpo.train`` gets the same message. Example::

    check_config(TrainConfig(model="/no/such/dir"), "grpo")
    # ConfigError: --model /no/such/dir: no such file or folder (a local checkpoint folder, a .gguf file or a hub id)
"""

from __future__ import annotations

import re
from pathlib import Path

from training.config import TrainConfig

DEVICES = ("auto", "cpu", "cuda")
JUDGE_DEVICES = ("auto", "cpu", "cuda")
VLLM_MODES = ("colocate", "server")
RECIPES = ("sft", "grpo")
#: A hub id: ``name`` or ``owner/name`` with the characters the Hugging Face Hub allows.
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")


class ConfigError(ValueError):
    """A training argument that cannot work; the message names the flag and what to change."""


def _one_of(flag: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ConfigError(f"--{flag} {value!r}: must be one of {', '.join(allowed)}")


def check_model(model: str) -> None:
    """``model`` names something loadable: an existing folder or ``.gguf`` file, or a hub id."""
    if not model:
        raise ConfigError("--model is required: a local checkpoint folder, a .gguf file or a hub id")
    path = Path(model).expanduser()
    if path.exists():
        if path.is_dir() and not (path / "config.json").exists() and not any(path.glob("*.gguf")):
            raise ConfigError(f"--model {model}: the folder has no config.json (not a transformers checkpoint)")
        return
    looks_local = model.startswith((".", "/", "~")) or model.endswith(".gguf") or model.count("/") > 1
    if looks_local or not HUB_ID.match(model):
        raise ConfigError(f"--model {model}: no such file or folder (a local checkpoint folder, a .gguf file "
                          "or a hub id)")


def check_batch(config: TrainConfig) -> None:
    """GRPO's generation batch (``batch_size * gradient_accumulation_steps`` completions per
    process) holds whole groups of ``num_generations``, and a group has at least two completions."""
    if config.num_generations < 2:
        raise ConfigError(f"--num_generations {config.num_generations}: GRPO needs at least 2 completions per "
                          "prompt (the advantage is normalised within the group)")
    per_step = config.batch_size * config.gradient_accumulation_steps
    if per_step % config.num_generations:
        raise ConfigError(f"--batch_size {config.batch_size} x --gradient_accumulation_steps "
                          f"{config.gradient_accumulation_steps} = {per_step} completions per step is not a multiple "
                          f"of --num_generations {config.num_generations}: make it one (e.g. --batch_size "
                          f"{config.num_generations})")


def check_tasks(config: TrainConfig) -> None:
    """``tasks`` and ``eval_tasks`` name registered tasks or splits (``select_tasks``), share no
    task and leave one to train on."""
    from hawkeye_env.tasks.selection import select_tasks
    from training.data import split_tasks

    for flag in ("tasks", "eval_tasks"):
        try:
            select_tasks(getattr(config, flag) or None)
        except (KeyError, ValueError) as exc:
            raise ConfigError(f"--{flag}: {exc.args[0] if exc.args else exc}") from None
    if config.eval_tasks:
        try:
            split_tasks(tasks=config.tasks or None, eval_tasks=config.eval_tasks)
        except ValueError as exc:
            raise ConfigError(f"--eval_tasks: {exc}") from None


def check_config(config: TrainConfig, recipe: str) -> None:
    """Raise ``ConfigError`` for the first argument of ``config`` that cannot work for ``recipe``."""
    from units.lib.index import CONTEXT_MODES

    _one_of("recipe", recipe, RECIPES)
    _one_of("device", config.device, DEVICES)
    _one_of("judge_device", config.judge_device, JUDGE_DEVICES)
    _one_of("context", config.context, CONTEXT_MODES)
    if config.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise ConfigError("--device cuda: no CUDA GPU is visible (use --device cpu or auto)")
    if not 0 <= config.eval_fraction < 1:
        raise ConfigError(f"--eval_fraction {config.eval_fraction}: must be in [0, 1)")
    for flag in ("max_steps", "batch_size", "gradient_accumulation_steps", "save_steps", "logging_steps"):
        if getattr(config, flag) < 1:
            raise ConfigError(f"--{flag} {getattr(config, flag)}: must be at least 1")
    check_tasks(config)
    check_model(config.model)
    if config.chat_template and not Path(config.chat_template).is_file():
        raise ConfigError(f"--chat_template {config.chat_template}: no such file (a Jinja chat template)")
    if config.use_peft and config.lora_r < 1:
        raise ConfigError(f"--lora_r {config.lora_r}: must be at least 1")
    resume = config.resume_from_checkpoint
    if resume and resume != "latest" and not Path(resume).is_dir():
        raise ConfigError(f"--resume_from_checkpoint {resume}: no such checkpoint folder (or pass 'latest')")
    if resume == "latest" and not list(Path(config.output_dir).glob("checkpoint-*")):
        raise ConfigError(f"--resume_from_checkpoint latest: {config.output_dir} has no checkpoint-* folder yet")
    if recipe == "grpo":
        _one_of("vllm_mode", config.vllm_mode, VLLM_MODES)
        check_batch(config)
        if config.multi_turn and config.max_turns < 1:
            raise ConfigError(f"--max_turns {config.max_turns}: a multi-turn episode needs at least 1 turn")


__all__ = ["DEVICES", "JUDGE_DEVICES", "RECIPES", "VLLM_MODES", "ConfigError", "check_batch", "check_config",
           "check_model", "check_tasks"]
