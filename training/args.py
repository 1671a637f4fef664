"""Every ``TrainConfig`` field from the command line or a YAML file, with TRL's own parser.

``TrlParser`` (TRL's ``HfArgumentParser``) turns each field of ``TrainConfig`` into a flag
(``--learning_rate 1e-6``, ``--tasks vector_add_fp32 softmax_fp32``, ``--bf16``) and reads
``--config FILE.yaml`` (field names as keys) first, flags overriding it. ``hawkeye train run``
is the front end::

    hawkeye train run grpo --config recipes/grpo.yaml --max_steps 10 --bf16
    python -m training.args grpo --model /tmp/tiny --output_dir runs/g --device cpu --judge_device cpu

A YAML file::

    model: runs/sft
    output_dir: runs/grpo
    tasks: [vector_add_fp32, softmax_fp32]
    learning_rate: 1.0e-6
    multi_turn: true
    extra: {gradient_checkpointing: true}    # passed to GRPOConfig / SFTConfig verbatim
"""

from __future__ import annotations

import ast
import inspect
import json
import sys
from dataclasses import fields

from training.config import TrainConfig

RECIPES = ("sft", "grpo")


def field_help() -> dict[str, str]:
    """Each ``TrainConfig`` field's docstring (the string literal under it), for the flags' help."""
    tree = ast.parse(inspect.getsource(TrainConfig))
    body = tree.body[0].body
    out = {}
    for node, after in zip(body, body[1:]):
        if isinstance(node, ast.AnnAssign) and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
            out[node.target.id] = " ".join(str(after.value.value).split())
    return out


def parse_config(argv: list[str]) -> TrainConfig:
    """``TrainConfig`` from flags and an optional ``--config FILE.yaml``; ``extra`` takes JSON on the
    command line (``--extra '{"gradient_checkpointing": true}'``) or a mapping in the YAML file."""
    from trl import TrlParser

    helps = field_help()
    for f in fields(TrainConfig):
        f.metadata = {**f.metadata, "help": helps.get(f.name, "")}
    argv, extra = list(argv), None
    if "--extra" in argv:  # argparse would call dict() on the text: take the JSON out and apply it after
        at = argv.index("--extra")
        extra, argv = argv[at + 1] if at + 1 < len(argv) else "", argv[:at] + argv[at + 2:]
    parser = TrlParser((TrainConfig,), prog="hawkeye train run RECIPE")
    (config,) = parser.parse_args_and_config(argv)
    if extra is not None:
        config.extra = {**config.extra, **json.loads(extra)}
    return config


def run(recipe: str, argv: list[str]):
    """Parse ``argv`` into a ``TrainConfig`` and run ``recipe`` (``sft`` or ``grpo``) with it."""
    if recipe not in RECIPES:
        raise ValueError(f"recipe must be one of {RECIPES}, not {recipe!r}")
    config = parse_config(argv)
    if recipe == "sft":
        from training.sft import train
    else:
        from training.grpo import train
    return train(config)


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in RECIPES:
        raise SystemExit(f"usage: python -m training.args {{{','.join(RECIPES)}}} [--config FILE.yaml] "
                         "[--FIELD VALUE ...]")
    run(argv[0], argv[1:])


if __name__ == "__main__":
    main()
