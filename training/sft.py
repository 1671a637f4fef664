"""Supervised fine-tuning on expert kernels, in the env's own prompt (TRL ``SFTTrainer``).

Data (``training.data.sft_examples``): for each training task, the env's first observation (chat
messages for ``config.context``) answered by the task's expert solution in a fenced block; plus one
example per runnable unit (its strategy on its reference, answered by its ``kernel.py``). The loss
is on the completion only (``completion_only_loss=True``). Held-out tasks (``split["eval"]``) are
never trained on; the split is written to ``run_metadata.json`` beside the checkpoints. W&B runs
offline when ``WANDB_API_KEY`` is unset. Run::

    hawkeye train sft --model /models/Qwen2.5-Coder-1.5B-Instruct --output-dir runs/sft --max-steps 200
    python -m training.tiny_model /tmp/tiny && hawkeye train sft --model /tmp/tiny --max-steps 2 --device cpu
"""

from __future__ import annotations

from training.config import (
    TrainConfig,
    finish_wandb,
    load_policy_model,
    load_tokenizer,
    save_run_metadata,
    wandb_offline_unless_keyed,
)
from training.data import sft_examples, split_tasks


def train(config: TrainConfig, split: dict[str, list[str]] | None = None):
    """Fine-tune ``config.model`` on the training split; returns the finished ``SFTTrainer``."""
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    split = split or split_tasks(config.split_seed, config.eval_fraction, config.tasks or None)
    wandb_offline_unless_keyed(config)
    save_run_metadata(config.output_dir, config, split, recipe="sft")
    rows = sft_examples(split["train"], config.context, config.include_units,
                        context_budget_chars=config.context_budget_chars)
    dataset = Dataset.from_list([{"prompt": r["prompt"], "completion": r["completion"]} for r in rows])
    args = SFTConfig(
        output_dir=config.output_dir,
        completion_only_loss=True,
        max_length=config.max_length,
        learning_rate=config.learning_rate,
        max_steps=config.max_steps,
        per_device_train_batch_size=config.batch_size,
        gradient_accumulation_steps=config.gradient_accumulation_steps,
        logging_steps=config.logging_steps,
        save_steps=config.save_steps,
        report_to=config.report_to,
        run_name=f"sft-{config.split_seed}-{config.context}",
        seed=config.seed,
        use_cpu=config.device == "cpu",
        bf16=config.bf16,
        **config.extra,
    )
    tokenizer = load_tokenizer(config)
    model = load_policy_model(config)
    trainer = SFTTrainer(model=model, args=args, train_dataset=dataset, processing_class=tokenizer)
    try:
        trainer.train()
    finally:
        finish_wandb(config)
    trainer.save_model(config.output_dir)
    return trainer


__all__ = ["train"]
