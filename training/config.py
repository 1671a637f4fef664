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

from hawkeye_env.observation import CONTEXT_BUDGET_CHARS
from hawkeye_env.registration import KERNEL_OPT_ID
from reward import REWARD_VERSION


@dataclass
class TrainConfig:
    """Knobs of one SFT or GRPO run; every field is written to ``run_metadata.json``."""

    model: str = ""
    """local path (or hub id, where one is reachable, or a ``.gguf`` file) of the policy model and its tokenizer"""
    output_dir: str = "runs/hawkeye"
    """folder for checkpoints, ``run_metadata.json`` and the offline W&B run"""
    tasks: list[str] = field(default_factory=list)
    """task ids or splits (``split:train``; ``hawkeye tasks list --split``) the run draws from; empty
    means every registered task"""
    eval_tasks: list[str] = field(default_factory=list)
    """task ids or splits held out for evaluation (``split:validation``); when set, every task of
    ``tasks`` (empty: every other task) is trained on and ``eval_fraction`` is not used"""
    eval_fraction: float = 0.25
    """share of tasks held out of training when ``eval_tasks`` is empty (``training.data.split_tasks``);
    at least one task is held out"""
    split_seed: int = 0
    """seed of the task split (same seed, same split)"""
    context: str = "docs"
    """unit context of the prompts, as in the env: ``none``, ``docs``, ``units`` or ``full``"""
    context_budget_chars: int = CONTEXT_BUDGET_CHARS
    """character budget of the unit context (``observation.CONTEXT_BUDGET_CHARS``, the env's default)"""
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
    """trainer device: ``auto`` (GPU when present), ``cuda`` (a GPU, required) or ``cpu`` (tests, smoke runs)"""
    bf16: bool = False
    """bfloat16 mixed precision (autocast) over float32 master weights, as TRL documents; the model
    is always loaded in float32 (``MASTER_DTYPE``), whatever dtype its checkpoint was saved in"""
    run_name: str = ""
    """name of the run in W&B and the trainer's logs; empty: ``<recipe>-<output_dir name>-<UTC time>-<hex>``"""
    chat_template: str = ""
    """a Jinja chat-template file used instead of the model's; empty: the model's own, except that
    multi-turn GRPO takes TRL's tool-capable Qwen2.5 (ChatML) template when the model's has no tool calling"""
    use_peft: bool = False
    """train a LoRA adapter (PEFT, built by TRL's ``get_peft_config``) instead of every weight"""
    lora_r: int = 16
    """LoRA rank (TRL's default)"""
    lora_alpha: int = 32
    """LoRA scaling numerator (TRL's default)"""
    lora_dropout: float = 0.05
    """dropout on the LoRA branch (TRL's default)"""
    lora_target_modules: list[str] = field(default_factory=list)
    """modules LoRA wraps (``all-linear``: every linear layer); empty: PEFT's default for the architecture"""
    resume_from_checkpoint: str = ""
    """resume a run from a ``checkpoint-N`` folder, or ``latest`` (the newest in ``output_dir``); the
    run's recorded task split (``run_metadata.json``) is reused"""
    eval_steps: int = 0
    """evaluate on the held-out split every this many steps and after training (0: after training
    only; -1: never); SFT reports the loss on the held-out experts, GRPO the reward and judge rates"""
    extra: dict | str = field(default_factory=dict)
    """extra keyword arguments passed verbatim to ``SFTConfig`` / ``GRPOConfig`` (a JSON object on
    the command line)"""

    def __post_init__(self) -> None:
        if isinstance(self.extra, str):
            self.extra = json.loads(self.extra) if self.extra.strip() else {}
        if not isinstance(self.extra, dict):
            raise ValueError(f"extra must be a mapping of SFTConfig/GRPOConfig arguments, not {self.extra!r}")
        self.tasks, self.eval_tasks = list(self.tasks), list(self.eval_tasks)
        self.lora_target_modules = list(self.lora_target_modules or [])


#: The dtype the recipes load weights in: float32 master weights, TRL's convention for mixed precision.
MASTER_DTYPE = "float32"


def model_location(model: str) -> tuple[str, dict]:
    """``from_pretrained``'s path and keyword arguments for ``model``: a folder or hub id as it is,
    a ``.gguf`` file as its folder plus ``gguf_file`` (transformers dequantizes it; needs ``gguf``)."""
    if str(model).endswith(".gguf"):
        return str(Path(model).parent), {"gguf_file": Path(model).name}
    return model, {}


def load_policy_model(config: TrainConfig):
    """``AutoModelForCausalLM`` of ``config.model`` with float32 master weights (``MASTER_DTYPE``)."""
    import torch
    from transformers import AutoModelForCausalLM

    path, kwargs = model_location(config.model)
    dtype = getattr(torch, MASTER_DTYPE)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype, **kwargs)
    if "gguf_file" not in kwargs:
        return model
    # transformers marks a GGUF-loaded model as quantized (so Trainer refuses it) although its
    # weights are dequantized floats: move them into a plain model of the same config.
    model_config = model.config
    if hasattr(model_config, "quantization_config"):
        del model_config.quantization_config
    plain = AutoModelForCausalLM.from_config(model_config, dtype=dtype)
    plain.load_state_dict(model.state_dict())
    plain.generation_config = model.generation_config
    return plain


def load_tokenizer(config: TrainConfig):
    """The tokenizer of ``config.model`` (a folder, hub id or ``.gguf`` file)."""
    from transformers import AutoTokenizer

    path, kwargs = model_location(config.model)
    return AutoTokenizer.from_pretrained(path, **kwargs)


def wandb_offline_unless_keyed(config: TrainConfig) -> None:
    """Follow W&B's own configuration: the run goes to ``$WANDB_DIR`` when set (else
    ``<output_dir>/wandb``), ``WANDB_MODE`` is kept when set (``disabled`` included), and only
    without both a mode and an API key does the run go offline (``wandb sync`` later)."""
    if "wandb" not in config.report_to:
        return
    import wandb

    if wandb.run is None:
        wandb.teardown()  # settings W&B cached from an earlier run in this process would override the ones below
    os.environ.setdefault("WANDB_DIR", str(Path(config.output_dir).resolve()))
    os.environ.setdefault("WANDB_PROJECT", "hawkeye")
    if not os.environ.get("WANDB_MODE") and not os.environ.get("WANDB_API_KEY"):
        os.environ["WANDB_MODE"] = "offline"
    Path(os.environ["WANDB_DIR"]).mkdir(parents=True, exist_ok=True)


def finish_wandb(config: TrainConfig) -> None:
    """Close the recipe's W&B run and settings, so the next run in this process gets its own folder."""
    if "wandb" in config.report_to:
        import wandb

        if wandb.run is not None:
            wandb.finish()
        wandb.teardown()


def run_record(config: TrainConfig, split: dict[str, list[str]] | None = None, recipe: str = "", **notes) -> dict:
    """What a run is: recipe, env id, reward version, task split, every config field, and ``notes``
    (the run name, the chat template used); written to ``run_metadata.json`` and the W&B config."""
    return {"recipe": recipe, "env_id": KERNEL_OPT_ID, "reward_version": REWARD_VERSION, "split": split or {},
            "config": asdict(config), **notes}


def save_run_metadata(out_dir: str | os.PathLike, config: TrainConfig, split: dict[str, list[str]] | None = None,
                      recipe: str = "", **notes) -> Path:
    """Write ``run_record(config, split, recipe, **notes)`` to ``run_metadata.json`` in ``out_dir``.

    ``split`` is ``{"train": [...], "eval": [...]}`` (``training.data.split_tasks``). Returns the path.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "run_metadata.json"
    path.write_text(json.dumps(run_record(config, split, recipe, **notes), indent=2, sort_keys=True, default=str)
                    + "\n", encoding="utf-8")
    return path


__all__ = ["MASTER_DTYPE", "TrainConfig", "finish_wandb", "load_policy_model", "load_tokenizer", "model_location",
           "run_record", "save_run_metadata", "wandb_offline_unless_keyed"]
