"""``hawkeye train sft`` and ``hawkeye train grpo``: the training recipes from the command line.

    python -m training.tiny_model /tmp/tiny
    hawkeye train sft --model /tmp/tiny --output-dir runs/sft --max-steps 2 --device cpu --context none
    hawkeye train grpo --model runs/sft --output-dir runs/grpo --judge-device cuda --use-vllm --vllm-mode server
    hawkeye train run grpo --config grpo.yaml --max_steps 10     # every TrainConfig field (training/args.py)

Both need the ``train`` extra (``pip install -e ".[train]"``).
"""

from __future__ import annotations

import typer

from training.config import TrainConfig

train_app = typer.Typer(help="Train a policy: SFT on expert kernels, GRPO against the judge.", no_args_is_help=True)


def _task_list(tasks: str) -> tuple[str, ...]:
    from hawkeye_env.tasks.registry import get_task

    ids = tuple(t.strip() for t in tasks.split(",") if t.strip())
    for task_id in ids:
        try:
            get_task(task_id)
        except KeyError as exc:
            raise typer.BadParameter(str(exc), param_hint="--tasks") from None
    return ids


def _config(**kw) -> TrainConfig:
    return TrainConfig(**{k: v for k, v in kw.items() if v is not None})


@train_app.command()
def sft(
    model: str = typer.Option(..., help="Local model folder (or hub id) to fine-tune."),
    output_dir: str = typer.Option("runs/sft", help="Checkpoints, run_metadata.json and the W&B run."),
    context: str = typer.Option("docs", help="Unit context of the prompts: none, docs, units, full."),
    tasks: str = typer.Option("", help="Comma-separated task ids to split into train/eval (default: all)."),
    eval_fraction: float = typer.Option(0.25, help="Share of tasks held out of training."),
    split_seed: int = typer.Option(0, help="Seed of the task split."),
    max_steps: int = typer.Option(100, help="Optimizer steps."),
    batch_size: int = typer.Option(4, help="Per-device batch size."),
    learning_rate: float = typer.Option(1e-5, help="Peak learning rate."),
    max_length: int = typer.Option(8192, help="Longest prompt+completion in tokens."),
    no_units: bool = typer.Option(False, "--no-units", help="Leave out the unit examples."),
    report_to: str = typer.Option("wandb", help="wandb (offline without WANDB_API_KEY), tensorboard or none."),
    device: str = typer.Option("auto", help="auto or cpu."),
    seed: int = typer.Option(0, help="Trainer seed."),
    bf16: bool = typer.Option(False, "--bf16", help="bfloat16 autocast over float32 master weights."),
) -> None:
    """Fine-tune on the training tasks' expert solutions and the units, in the env's prompt."""
    from training.sft import train

    train(_config(model=model, output_dir=output_dir, context=context, tasks=_task_list(tasks),
                  eval_fraction=eval_fraction,
                  split_seed=split_seed, max_steps=max_steps, batch_size=batch_size, learning_rate=learning_rate,
                  max_length=max_length, include_units=not no_units, report_to=report_to, device=device, seed=seed,
                  bf16=bf16))


@train_app.command()
def grpo(
    model: str = typer.Option(..., help="Local model folder (or hub id), e.g. an SFT output."),
    output_dir: str = typer.Option("runs/grpo", help="Checkpoints, run_metadata.json, verdict store, W&B run."),
    context: str = typer.Option("docs", help="Unit context of the prompts: none, docs, units, full."),
    tasks: str = typer.Option("", help="Comma-separated task ids to split into train/eval (default: all)."),
    eval_fraction: float = typer.Option(0.25, help="Share of tasks held out of training."),
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
    device: str = typer.Option("auto", help="auto or cpu."),
    seed: int = typer.Option(0, help="Trainer seed."),
    bf16: bool = typer.Option(False, "--bf16", help="bfloat16 autocast over float32 master weights."),
) -> None:
    """GRPO against the one evaluator: reward = verdict.reward of each completion."""
    from training.grpo import train

    train(_config(model=model, output_dir=output_dir, context=context, tasks=_task_list(tasks),
                  eval_fraction=eval_fraction,
                  split_seed=split_seed, num_generations=num_generations, max_completion_length=max_completion_length,
                  max_steps=max_steps, batch_size=batch_size, learning_rate=learning_rate, beta=beta,
                  multi_turn=multi_turn, max_turns=max_turns, use_vllm=use_vllm, vllm_mode=vllm_mode,
                  judge_device=judge_device, judge_workers=judge_workers,
                  report_to=report_to, device=device, seed=seed, bf16=bf16))


@train_app.command("run", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def run(
    ctx: typer.Context,
    recipe: str = typer.Argument(..., help="sft or grpo."),
) -> None:
    """Run a recipe with every TrainConfig field settable: --config FILE.yaml, then --FIELD VALUE flags."""
    from training.args import RECIPES
    from training.args import run as run_recipe

    if recipe not in RECIPES:
        raise typer.BadParameter(f"recipe must be one of {', '.join(RECIPES)}", param_hint="RECIPE")
    run_recipe(recipe, list(ctx.args))


__all__ = ["train_app"]


if __name__ == "__main__":
    train_app()
