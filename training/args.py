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
    tasks: [vector_add_fp32, softmax_fp32]   # or splits: [split:train], with eval_tasks: [split:validation]
    learning_rate: 1.0e-6
    multi_turn: true
    extra: {gradient_checkpointing: true}    # passed to GRPOConfig / SFTConfig verbatim
"""

from __future__ import annotations

import ast
import difflib
import inspect
import json
import re
import sys
from dataclasses import fields

from training.checks import RECIPES, ConfigError
from training.config import TrainConfig


def field_help() -> dict[str, str]:
    """Each ``TrainConfig`` field's docstring (the string literal under it), for the flags' help."""
    tree = ast.parse(inspect.getsource(TrainConfig))
    body = tree.body[0].body
    out = {}
    for node, after in zip(body, body[1:]):
        if isinstance(node, ast.AnnAssign) and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
            out[node.target.id] = " ".join(str(after.value.value).split())
    return out


def _unknown(message: str, source: str) -> ConfigError:
    """TRL's "unknown arguments" error as a ``ConfigError`` naming each key and the closest field."""
    names = [f.name for f in fields(TrainConfig)]
    keys = re.findall(r"'--([\w-]+)'", message)
    hints = [f"{k} (did you mean {close[0]}?)" if (close := difflib.get_close_matches(k.replace("-", "_"), names, 1))
             else k for k in keys]
    return ConfigError(f"unknown {source}: {', '.join(hints) or message}; every TrainConfig field is one "
                       "(python -m training.args grpo --help)")


def parse_config(argv: list[str]) -> TrainConfig:
    """``TrainConfig`` from flags and an optional ``--config FILE.yaml``; ``extra`` takes JSON on the
    command line (``--extra '{"gradient_checkpointing": true}'``) or a mapping in the YAML file. An
    unknown flag or YAML key, or ``--extra`` that is not a JSON object, raises ``ConfigError``."""
    from trl import TrlParser

    helps = field_help()
    for f in fields(TrainConfig):
        f.metadata = {**f.metadata, "help": helps.get(f.name, "")}
    argv, extra = list(argv), None
    if "--extra" in argv:  # argparse would call dict() on the text: take the JSON out and apply it after
        at = argv.index("--extra")
        extra, argv = argv[at + 1] if at + 1 < len(argv) else "", argv[:at] + argv[at + 2:]
    parser = TrlParser((TrainConfig,), prog="hawkeye train run RECIPE")
    try:
        (config,) = parser.parse_args_and_config(argv)
    except ValueError as exc:
        text = str(exc)
        if "config file" in text:
            raise _unknown(text, "key(s) in the YAML file") from None
        if "not used by the HfArgumentParser" in text:
            raise _unknown(text, "flag(s)") from None
        raise ConfigError(text) from None
    if extra is not None:
        try:
            parsed = json.loads(extra)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"--extra {extra!r}: not JSON ({exc})") from None
        if not isinstance(parsed, dict):
            raise ConfigError(f"--extra {extra!r}: must be a JSON object of GRPOConfig/SFTConfig arguments")
        config.extra = {**config.extra, **parsed}
    return config


def run_config(recipe: str, config: TrainConfig):
    """Run ``recipe`` (``sft`` or ``grpo``) with ``config``; returns the finished trainer."""
    if recipe not in RECIPES:
        raise ConfigError(f"recipe must be one of {', '.join(RECIPES)}, not {recipe!r}")
    if recipe == "sft":
        from training.sft import train
    else:
        from training.grpo import train
    return train(config)


def run(recipe: str, argv: list[str]):
    """Parse ``argv`` into a ``TrainConfig`` and run ``recipe`` (``sft`` or ``grpo``) with it."""
    return run_config(recipe, parse_config(argv))


def main(argv: list[str] | None = None) -> None:
    """The command line; an argument that cannot work exits 2 with its message, no traceback."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in RECIPES:
        raise SystemExit(f"usage: python -m training.args {{{','.join(RECIPES)}}} [--config FILE.yaml] "
                         "[--FIELD VALUE ...]")
    try:
        run(argv[0], argv[1:])
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
