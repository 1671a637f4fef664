"""Single-turn GRPO against the one evaluator (TRL ``GRPOTrainer``).

Each prompt is the env's first observation for a training task (``training.data.grpo_prompts``);
the policy samples ``num_generations`` completions per prompt and each is scored by
``training.reward.make_reward_func``: ``to_candidate`` then ``evaluate_many`` (sandboxed worker
processes, never the trainer's process), reward = ``verdict.reward`` (reward v3). The verdict
breakdown (``judge/compile_rate``, ``judge/correct_rate``, ``judge/violation_rate``,
``judge/no_source_rate``, ``judge/timed_rate``, ``judge/mean_speedup``) is logged through TRL's
``log_metric`` next to ``reward`` and ``kl``.

Rollouts are kept by the reward function in ``<output_dir>/rollouts.jsonl`` (one row per
completion: step, task, prompt, completion, stage, reward, verdict) and every verdict in the run's
store ``<output_dir>/verdicts.sqlite``; TRL's own ``log_completions`` stays off (TRL 1.16 with
wandb 0.31 crashes building its completions table: "Found extra keys: reasoning_content").
``--use-vllm`` passes ``use_vllm``/``vllm_mode`` to TRL
(``colocate``: vLLM inside the trainer; ``server``: start ``trl vllm-serve --model M`` first).

``multi_turn=True`` (``--multi-turn``) switches to TRL's experimental ``environment_factory``: each
rollout is an env episode (``training.tool_env.KernelOptToolEnv``) where the model calls the tool
``submit_kernel`` up to ``max_turns`` times and reads the judge's feedback; the rollout's reward is
the env's reward for its last submission (-1.0 without one), given by
``training.reward.make_episode_reward_func``, which keeps rollouts (with every submission and its
reward) and logs the same judge rates as the single-turn reward. A model whose chat template cannot
render a tool call gets TRL's Qwen2.5 template (``recipe_options.chat_template`` says so and
``run_metadata.json`` records it).

Held-out tasks (``split["eval"]``) are the trainer's ``eval_dataset``: TRL's evaluation samples
them and logs ``eval_reward`` and ``eval_judge/*`` (every ``eval_steps`` and after training), their
rollouts kept with ``split`` ``eval``. ``--use_peft`` trains a LoRA adapter, ``--resume_from_checkpoint``
continues a run on its recorded split, and the W&B run carries hawkeye's config (``hawkeye``). Run::

    hawkeye train grpo --model runs/sft --output-dir runs/grpo --judge-device cuda --use-vllm --vllm-mode colocate
    python -m training.tiny_model /tmp/tiny && hawkeye train grpo --model /tmp/tiny --max-steps 2 --device cpu
"""

from __future__ import annotations

from pathlib import Path

from training.checks import check_config
from training.config import TrainConfig, finish_wandb, run_record, save_run_metadata, wandb_offline_unless_keyed
from training.data import grpo_prompts
from training.recipe_options import (
    chat_template,
    load_policy,
    peft_config,
    resume_checkpoint,
    run_name,
    run_split,
    wandb_run_config,
)
from training.reward import make_episode_reward_func, make_reward_func
from training.tool_env import EnvironmentFactory


def store_path(config: TrainConfig) -> str:
    """The run's results store: ``config.store``, else ``<output_dir>/verdicts.sqlite`` (made here)."""
    store = config.store or str(Path(config.output_dir) / "verdicts.sqlite")
    if store != ":memory:":
        Path(store).parent.mkdir(parents=True, exist_ok=True)
    return store


def make_evaluator(config: TrainConfig):
    """The run's ``Evaluator``: the run's results store, the configured worker timeout."""
    from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator
    from hawkeye_env.judge.parent.store import ResultStore

    return Evaluator(ResultStore(store_path(config)), EvalConfig(timeout_s=config.judge_timeout_s))


def grpo_args(config: TrainConfig, name: str, evaluate_every: bool):
    """TRL's ``GRPOConfig`` for ``config`` (run ``name``; held-out evaluation every ``eval_steps``
    when ``evaluate_every`` and ``eval_steps > 0``)."""
    from trl import GRPOConfig

    return GRPOConfig(
        output_dir=config.output_dir,
        num_generations=config.num_generations,
        max_completion_length=config.max_completion_length,
        learning_rate=config.learning_rate,
        max_steps=config.max_steps,
        per_device_train_batch_size=config.batch_size,
        per_device_eval_batch_size=config.num_generations,
        gradient_accumulation_steps=config.gradient_accumulation_steps,
        beta=config.beta,
        temperature=config.temperature,
        use_vllm=config.use_vllm,
        vllm_mode=config.vllm_mode,
        log_completions=False,
        max_tool_calling_iterations=config.max_turns if config.multi_turn else None,
        eval_strategy="steps" if evaluate_every and config.eval_steps > 0 else "no",
        eval_steps=config.eval_steps if config.eval_steps > 0 else None,
        logging_steps=config.logging_steps,
        save_steps=config.save_steps,
        report_to=config.report_to,
        run_name=name,
        seed=config.seed,
        use_cpu=config.device == "cpu",
        bf16=config.bf16,
        **config.extra,
    )



def train(config: TrainConfig, split: dict[str, list[str]] | None = None, reward_func=None):
    """Run GRPO on the training split, evaluate on the held-out split; returns the finished ``GRPOTrainer``.

    ``reward_func`` defaults to ``make_reward_func(make_evaluator(config), ...)``; the trainer's
    reward function is reachable as ``trainer.reward_funcs[0]`` (its ``.stats`` holds the counts).
    With ``config.multi_turn`` the reward is the env's (``make_episode_reward_func``), plus
    ``reward_func`` when one is given. Raises ``ConfigError`` for arguments that cannot work.
    """
    from datasets import Dataset
    from trl import GRPOTrainer

    check_config(config, "grpo")
    split = split or run_split(config)
    name = run_name(config, "grpo")
    tokenizer, model = load_policy(config)
    template = chat_template(tokenizer, config, needs_tools=config.multi_turn)
    notes = {"run_name": name, "chat_template": template}
    wandb_offline_unless_keyed(config)
    save_run_metadata(config.output_dir, config, split, recipe="grpo", **notes)

    def rows(part: str) -> list[dict]:
        return [{**row, "split": part} for row in grpo_prompts(split[part], config.context,
                                                                context_budget_chars=config.context_budget_chars)]

    rollouts = Path(config.output_dir) / "rollouts.jsonl"
    environment_factory = None
    if config.multi_turn:
        environment_factory = EnvironmentFactory(store_path(config), config.judge_device, config.context,
                                                 config.max_turns, context_budget_chars=config.context_budget_chars,
                                                 timeout_s=config.judge_timeout_s, workers=config.judge_workers)
        reward_funcs = [make_episode_reward_func(rollouts)] + ([reward_func] if reward_func is not None else [])
    else:
        if reward_func is None:
            reward_func = make_reward_func(make_evaluator(config), config.judge_device, config.judge_workers,
                                           rollouts_path=rollouts)
        reward_funcs = [reward_func]
    eval_rows = rows("eval") if config.eval_steps >= 0 else []
    args = grpo_args(config, name, evaluate_every=bool(eval_rows))
    trainer = GRPOTrainer(model=model, reward_funcs=reward_funcs, args=args,
                          train_dataset=Dataset.from_list(rows("train")),
                          eval_dataset=Dataset.from_list(eval_rows) if eval_rows else None,
                          processing_class=tokenizer, environment_factory=environment_factory,
                          peft_config=peft_config(config),
                          callbacks=[wandb_run_config(run_record(config, split, "grpo", **notes))])
    try:
        trainer.train(resume_from_checkpoint=resume_checkpoint(config))
        if eval_rows:
            trainer.evaluate()
        log_rollouts_table(config, rollouts)
    finally:
        finish_wandb(config)
    trainer.save_model(config.output_dir)
    return trainer


ROLLOUT_COLUMNS = ("step", "split", "task", "stage", "reward", "completion")


def log_rollouts_table(config: TrainConfig, path: Path) -> int:
    """Log ``rollouts.jsonl`` to the run's W&B run as the table ``rollouts`` (``ROLLOUT_COLUMNS``);
    returns the rows logged (0 without W&B, a run or rollouts)."""
    if "wandb" not in config.report_to or not path.exists():
        return 0
    import json

    import wandb

    if wandb.run is None:
        return 0
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    wandb.log({"rollouts": wandb.Table(columns=list(ROLLOUT_COLUMNS),
                                       data=[[r.get(c, "train" if c == "split" else None) for c in ROLLOUT_COLUMNS]
                                             for r in rows])})
    return len(rows)


__all__ = ["ROLLOUT_COLUMNS", "log_rollouts_table", "make_evaluator", "store_path", "train"]
