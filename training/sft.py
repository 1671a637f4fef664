"""Supervised fine-tuning on expert kernels, in the env's own prompt (TRL ``SFTTrainer``).

Data (``training.data.sft_examples``): for each training task, the env's first observation (chat
messages for ``config.context``) answered by the task's expert solution in a fenced block; plus one
example per runnable unit (its strategy on its reference, answered by its ``kernel.py``). The loss
is on the completion only (``completion_only_loss=True``). Held-out tasks (``split["eval"]``) are
never trained on: the trainer reports the loss on their experts (``eval_loss``, every
``eval_steps`` and after training); the split is written to ``run_metadata.json`` beside the
checkpoints and reused on resume. A task without an expert (a generated one) gives no example: a
held-out split of such tasks has no ``eval_loss``, and a training split of them needs the unit
examples (``ConfigError`` with ``--no-units``). ``--use_peft`` trains a LoRA adapter; the W&B run (offline when
``WANDB_API_KEY`` is unset) carries hawkeye's config under ``hawkeye``. Run::

    hawkeye train sft --model /models/Qwen2.5-Coder-1.5B-Instruct --output-dir runs/sft --max-steps 200
    python -m training.tiny_model /tmp/tiny && hawkeye train sft --model /tmp/tiny --max-steps 2 --device cpu
"""

from __future__ import annotations

from hawkeye_env.tasks.registry import get_task
from training.checks import ConfigError, check_config
from training.config import TrainConfig, finish_wandb, run_record, save_run_metadata, wandb_offline_unless_keyed
from training.data import sft_examples
from training.recipe_options import (
    chat_template,
    load_policy,
    peft_config,
    resume_checkpoint,
    run_name,
    run_split,
    wandb_run_config,
)


def train(config: TrainConfig, split: dict[str, list[str]] | None = None):
    """Fine-tune ``config.model`` on the training split, evaluate the loss on the held-out split's
    experts; returns the finished ``SFTTrainer``. Raises ``ConfigError`` for arguments that cannot work."""
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    check_config(config, "sft")
    split = split or run_split(config)
    if not config.include_units and all(get_task(t).solution is None for t in split["train"]):
        raise ConfigError("no SFT example: no training task ships an expert solution (generated tasks do not) "
                          "and --no-units leaves out the unit examples")
    name = run_name(config, "sft")
    tokenizer, model = load_policy(config)
    notes = {"run_name": name, "chat_template": chat_template(tokenizer, config, needs_tools=False)}
    wandb_offline_unless_keyed(config)
    save_run_metadata(config.output_dir, config, split, recipe="sft", **notes)

    def dataset(task_ids: list[str], units: bool):
        rows = sft_examples(task_ids, config.context, units, context_budget_chars=config.context_budget_chars)
        return Dataset.from_list([{"prompt": r["prompt"], "completion": r["completion"]} for r in rows])

    eval_dataset = dataset(split["eval"], False) if split["eval"] and config.eval_steps >= 0 else None
    eval_dataset = eval_dataset if eval_dataset is not None and len(eval_dataset) else None  # experts to score
    args = SFTConfig(
        output_dir=config.output_dir,
        completion_only_loss=True,
        max_length=config.max_length,
        learning_rate=config.learning_rate,
        max_steps=config.max_steps,
        per_device_train_batch_size=config.batch_size,
        per_device_eval_batch_size=config.batch_size,
        gradient_accumulation_steps=config.gradient_accumulation_steps,
        eval_strategy="steps" if eval_dataset is not None and config.eval_steps > 0 else "no",
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
    trainer = SFTTrainer(model=model, args=args, train_dataset=dataset(split["train"], config.include_units),
                         eval_dataset=eval_dataset, processing_class=tokenizer, peft_config=peft_config(config),
                         callbacks=[wandb_run_config(run_record(config, split, "sft", **notes))])
    try:
        trainer.train(resume_from_checkpoint=resume_checkpoint(config))
        if eval_dataset is not None:
            trainer.evaluate()
    finally:
        finish_wandb(config)
    trainer.save_model(config.output_dir)
    return trainer


__all__ = ["train"]
