"""Configuration shared by the training recipes (``training/sft.py``, ``training/grpo.py``).

``TrainConfig`` holds every knob of a run, one documented field each; ``save_run_metadata`` writes it
beside the checkpoints with the env id, the reward version and the exact task split, so a checkpoint
says what it was trained on and judged by. Example::

    cfg = TrainConfig(model="/models/qwen2.5-coder-1.5b", output_dir="runs/sft0", max_steps=200)
    save_run_metadata(cfg.output_dir, cfg, split)
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from hawkeye_env.registration import KERNEL_OPT_ID
from reward import REWARD_VERSION


@dataclass
class TrainConfig:
    """Knobs of one SFT or GRPO run; every field is written to ``run_metadata.json``."""

    model: str = ""
    """local path (or hub id, where one is reachable) of the policy model and its tokenizer"""
    output_dir: str = "runs/hawkeye"
    """folder for checkpoints, ``run_metadata.json`` and the offline W&B run"""
    tasks: tuple[str, ...] = ()
    """task ids the split draws from (``hawkeye tasks list``); empty means every registered task"""
    eval_fraction: float = 0.25
    """share of tasks held out of training (``training.data.split_tasks``); at least one task is held out"""
    split_seed: int = 0
    """seed of the task split (same seed, same split)"""
    context: str = "docs"
    """unit context of the prompts, as in the env: ``none``, ``docs``, ``units`` or ``full``"""
    context_budget_chars: int = 12_000
    """character budget of the unit context (the env's default)"""
    include_units: bool = True
    """SFT only: add one example per runnable unit (its strategy on its reference -> its kernel.py)"""
    num_generations: int = 4
    """GRPO: completions sampled per prompt (the group the advantage is normalised over)"""
    max_completion_length: int = 2048
    """GRPO: longest completion in tokens (a whole Triton module is ~500-1500 tokens)"""
    max_length: int | None = 8192
    """SFT: longest prompt+completion in tokens; longer examples are truncated"""
    learning_rate: float = 1e-5
    """peak learning rate of AdamW"""
    max_steps: int = 100
    """optimizer steps of the run"""
    batch_size: int = 4
    """per-device batch size (GRPO: completions per device per step; a multiple of num_generations)"""
    gradient_accumulation_steps: int = 1
    """micro-batches accumulated per optimizer step"""
    beta: float = 0.0
    """GRPO: KL coefficient against the reference model (0 skips loading a reference model)"""
    temperature: float = 1.0
    """GRPO: sampling temperature of the rollouts"""
    multi_turn: bool = False
    """GRPO: multi-turn rollouts through ``training.tool_env`` (tool ``submit_kernel``; reward from the env)"""
    max_turns: int = 4
    """GRPO multi-turn: judged submissions per episode (the env's ``max_turns``)"""
    use_vllm: bool = False
    """GRPO: generate with vLLM (``pip install -e .[vllm]``)"""
    vllm_mode: str = "colocate"
    """GRPO: ``colocate`` (vLLM in the trainer's process) or ``server`` (``trl vllm-serve`` elsewhere)"""
    judge_device: str = "auto"
    """device the evaluator judges on: ``auto``, ``cpu`` (interpreter, untimed) or ``cuda`` (timed)"""
    judge_workers: int = 2
    """worker processes judging at once (on CUDA keep one per GPU so timings never share a GPU)"""
    judge_timeout_s: float = 300.0
    """hard wall-clock limit of one judged candidate (``EvalConfig.timeout_s``)"""
    store: str = ""
    """results-store path of the evaluator (empty: ``<output_dir>/verdicts.sqlite``)"""
    report_to: str = "wandb"
    """trainer loggers (``wandb``, ``tensorboard``, ``none``); W&B runs offline without WANDB_API_KEY"""
    logging_steps: int = 1
    """log metrics every this many steps"""
    save_steps: int = 500
    """checkpoint every this many steps (the final model is always saved)"""
    seed: int = 0
    """seed of the trainer (data order, sampling, init of new heads)"""
    device: str = "auto"
    """trainer device: ``auto`` (GPU when present) or ``cpu`` (tests, smoke runs)"""
    bf16: bool = False
    """train in bfloat16 mixed precision (on for GPUs that support it)"""
    extra: dict = field(default_factory=dict)
    """extra keyword arguments passed verbatim to ``SFTConfig`` / ``GRPOConfig``"""


def wandb_offline_unless_keyed(config: TrainConfig) -> None:
    """Write the W&B run into ``<output_dir>/wandb``, offline when there is no API key to sync with."""
    if "wandb" not in config.report_to:
        return
    import wandb

    if wandb.run is None:
        wandb.teardown()  # settings W&B cached from an earlier run in this process would override the ones below
    os.environ["WANDB_DIR"] = str(Path(config.output_dir).resolve())
    os.environ.setdefault("WANDB_PROJECT", "hawkeye")
    if not os.environ.get("WANDB_API_KEY"):
        os.environ["WANDB_MODE"] = "offline"
    Path(os.environ["WANDB_DIR"]).mkdir(parents=True, exist_ok=True)


def finish_wandb(config: TrainConfig) -> None:
    """Close the recipe's W&B run and settings, so the next run in this process gets its own folder."""
    if "wandb" in config.report_to:
        import wandb

        if wandb.run is not None:
            wandb.finish()
        wandb.teardown()


def save_run_metadata(out_dir: str | os.PathLike, config: TrainConfig, split: dict[str, list[str]] | None = None,
                      recipe: str = "") -> Path:
    """Write ``run_metadata.json`` in ``out_dir``: config, env id, reward version, task split.

    ``split`` is ``{"train": [...], "eval": [...]}`` (``training.data.split_tasks``). Returns the path.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    meta = {
        "recipe": recipe, "env_id": KERNEL_OPT_ID, "reward_version": REWARD_VERSION,
        "split": split or {}, "config": asdict(config),
    }
    path = out / "run_metadata.json"
    path.write_text(json.dumps(meta, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8")
    return path


__all__ = ["TrainConfig", "finish_wandb", "save_run_metadata", "wandb_offline_unless_keyed"]
