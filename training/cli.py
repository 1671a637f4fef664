"""``hawkeye train sft`` and ``hawkeye train grpo``: the training recipes from the command line.

    python -m training.tiny_model /tmp/tiny
    hawkeye train sft --model /tmp/tiny --output-dir runs/sft --max-steps 2 --device cpu --context none
    hawkeye train grpo --model runs/sft --tasks split:train --eval-tasks split:validation   # the project's splits
    hawkeye train grpo --model runs/sft --output-dir runs/grpo --judge-device cuda --use-vllm --vllm-mode server
    hawkeye train run grpo --config grpo.yaml --max_steps 10     # every TrainConfig field (training/args.py)

Both need the ``train`` extra (``pip install -e ".[train]"``).
"""

from __future__ import annotations

from dataclasses import fields

import typer

from training.checks import ConfigError
from training.config import TrainConfig

train_app = typer.Typer(help="Train a policy: SFT on expert kernels, GRPO against the judge.", no_args_is_help=True)

# Options both recipes take (TrainConfig fields; training/recipe_options.py says what each hands TRL).
DEVICE = typer.Option("auto", help="Trainer device: auto, cuda or cpu.")
USE_PEFT = typer.Option(False, "--use-peft", help="Train a LoRA adapter (PEFT) instead of every weight.")
LORA_R = typer.Option(16, help="LoRA rank (with --use-peft).")
LORA_ALPHA = typer.Option(32, help="LoRA alpha (with --use-peft).")
RESUME = typer.Option("", help="Resume from a checkpoint-N folder, or 'latest' in --output-dir (same task split).")
EVAL_STEPS = typer.Option(0, help="Evaluate on the held-out tasks every N steps and after training (0: after "
                                  "training only; -1: never).")
RUN_NAME = typer.Option("", help="W&B run name (default: <recipe>-<output dir name>-<UTC time>).")
CHAT_TEMPLATE = typer.Option("", help="Jinja chat-template file to use instead of the model's.")


TASKS = typer.Option("", help="Comma-separated task ids or splits (split:train) to train on; without "
                            "--eval-tasks, --eval-fraction of them is held out (default: all).")
EVAL_TASKS = typer.Option("", help="Comma-separated task ids or splits (split:validation) held out for evaluation "
                                   "instead of --eval-fraction; --tasks (default: every other task) is trained on.")


def _task_list(tasks: str, flag: str = "--tasks") -> tuple[str, ...]:
    """The items of ``tasks`` (ids or ``split:NAME``), as given; a usage error when one names no task."""
    from hawkeye_env.tasks.selection import select_tasks

    items = tuple(t.strip() for t in tasks.split(",") if t.strip())
    try:
        select_tasks(items or None)
    except (KeyError, ValueError) as exc:
        raise typer.BadParameter(str(exc.args[0] if exc.args else exc), param_hint=flag) from None
    return items


def _config(params: dict, **overrides) -> TrainConfig:
    """The ``TrainConfig`` of a command's parameters (those named like a field, the task lists checked)."""
    names = {f.name for f in fields(TrainConfig)}
    kw = {**{k: v for k, v in params.items() if k in names}, **overrides}
    return TrainConfig(**{**kw, "tasks": _task_list(kw.get("tasks", ""), "--tasks"),
                          "eval_tasks": _task_list(kw.get("eval_tasks", ""), "--eval-tasks")})


def _train(recipe: str, config: TrainConfig) -> None:
    """Run ``recipe`` on ``config``; an argument that cannot work is a usage error (its message, exit
    2), not a traceback."""
    from training.args import run_config

    try:
        run_config(recipe, config)
    except ConfigError as exc:
        raise typer.BadParameter(str(exc)) from None


@train_app.command()
def sft(
    model: str = typer.Option(..., help="Local model folder (or hub id) to fine-tune."),
    output_dir: str = typer.Option("runs/sft", help="Checkpoints, run_metadata.json and the W&B run."),
    context: str = typer.Option("docs", help="Unit context of the prompts: none, docs, units, full."),
    tasks: str = TASKS,
    eval_tasks: str = EVAL_TASKS,
    eval_fraction: float = typer.Option(0.25, help="Share of tasks held out of training (without --eval-tasks)."),
    split_seed: int = typer.Option(0, help="Seed of the task split."),
    max_steps: int = typer.Option(100, help="Optimizer steps."),
    batch_size: int = typer.Option(4, help="Per-device batch size."),
    learning_rate: float = typer.Option(1e-5, help="Peak learning rate."),
    max_length: int = typer.Option(8192, help="Longest prompt+completion in tokens."),
    no_units: bool = typer.Option(False, "--no-units", help="Leave out the unit examples."),
    report_to: str = typer.Option("wandb", help="wandb (offline without WANDB_API_KEY), tensorboard or none."),
    device: str = DEVICE,
    seed: int = typer.Option(0, help="Trainer seed."),
    bf16: bool = typer.Option(False, "--bf16", help="bfloat16 autocast over float32 master weights."),
    use_peft: bool = USE_PEFT,
    lora_r: int = LORA_R,
    lora_alpha: int = LORA_ALPHA,
    resume_from_checkpoint: str = RESUME,
    eval_steps: int = EVAL_STEPS,
    run_name: str = RUN_NAME,
    chat_template: str = CHAT_TEMPLATE,
) -> None:
    """Fine-tune on the training tasks' expert solutions and the units, in the env's prompt."""
    _train("sft", _config(locals(), include_units=not no_units))


@train_app.command()
def grpo(
    model: str = typer.Option(..., help="Local model folder (or hub id), e.g. an SFT output."),
    output_dir: str = typer.Option("runs/grpo", help="Checkpoints, run_metadata.json, verdict store, W&B run."),
    context: str = typer.Option("docs", help="Unit context of the prompts: none, docs, units, full."),
    tasks: str = TASKS,
    eval_tasks: str = EVAL_TASKS,
    eval_fraction: float = typer.Option(0.25, help="Share of tasks held out of training (without --eval-tasks)."),
    split_seed: int = typer.Option(0, help="Seed of the task split."),
    num_generations: int = typer.Option(4, help="Completions per prompt."),
    max_completion_length: int = typer.Option(2048, help="Longest completion in tokens."),
    max_steps: int = typer.Option(100, help="Optimizer steps."),
    batch_size: int = typer.Option(4, help="Completions per device per step (a multiple of num_generations)."),
    learning_rate: float = typer.Option(1e-6, help="Peak learning rate."),
    beta: float = typer.Option(0.0, help="KL coefficient (0: no reference model)."),
    multi_turn: bool = typer.Option(False, "--multi-turn", help="Multi-turn episodes with the submit_kernel tool."),
    max_turns: int = typer.Option(4, help="Multi-turn: judged submissions per episode."),
    use_vllm: bool = typer.Option(False, "--use-vllm", help="Generate with vLLM."),
    vllm_mode: str = typer.Option("colocate", help="colocate or server (start `trl vllm-serve` first)."),
    judge_device: str = typer.Option("auto", help="Device the judge runs on: auto, cpu, cuda."),
    judge_workers: int = typer.Option(2, help="Judge worker processes at once (1 per GPU on CUDA)."),
    report_to: str = typer.Option("wandb", help="wandb (offline without WANDB_API_KEY), tensorboard or none."),
    device: str = DEVICE,
    seed: int = typer.Option(0, help="Trainer seed."),
    bf16: bool = typer.Option(False, "--bf16", help="bfloat16 autocast over float32 master weights."),
    use_peft: bool = USE_PEFT,
    lora_r: int = LORA_R,
    lora_alpha: int = LORA_ALPHA,
    resume_from_checkpoint: str = RESUME,
    eval_steps: int = EVAL_STEPS,
    run_name: str = RUN_NAME,
    chat_template: str = CHAT_TEMPLATE,
) -> None:
    """GRPO against the one evaluator: reward = verdict.reward of each completion (or episode)."""
    _train("grpo", _config(locals()))


@train_app.command("run", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def run(
    ctx: typer.Context,
    recipe: str = typer.Argument(..., help="sft or grpo."),
) -> None:
    """Run a recipe with every TrainConfig field settable: --config FILE.yaml, then --FIELD VALUE flags."""
    from training.args import run as run_recipe
    from training.checks import RECIPES

    if recipe not in RECIPES:
        raise typer.BadParameter(f"recipe must be one of {', '.join(RECIPES)}", param_hint="RECIPE")
    try:
        run_recipe(recipe, list(ctx.args))
    except ConfigError as exc:
        raise typer.BadParameter(str(exc)) from None


__all__ = ["train_app"]


if __name__ == "__main__":
    train_app()
