"""Training data: task splits, SFT examples and GRPO prompts, all in the env's own prompt.

A task prompt is exactly what ``hawkeye/KernelOpt-v3`` shows at ``reset`` for that task and context
mode (``obs["messages"]``, ``obs["prompt"]``), so a policy trained here reads at test time what it
read in training. SFT examples pair that prompt with the task's expert solution in a fenced block,
plus one example per runnable unit: its strategy applied to its own reference computation, answered
by its ``kernel.py``. Tasks are named as the env names them (``hawkeye_env/tasks/selection.py``): task
ids or a split, ``split:train``; a generated task ships no expert solution, so it has GRPO prompts and
no SFT example. Example::

    split = split_tasks(seed=0, eval_fraction=0.25)
    split = split_tasks(tasks="split:train", eval_tasks="split:validation")   # the project's own splits
    rows = sft_examples(split["train"], context="docs")
    rows[0]["prompt"]      # [system, user] messages, as the env shows them
    rows[0]["completion"]  # [assistant] message: ```python <solution>```
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence

from hawkeye_env.env import KernelOptEnv
from hawkeye_env.observation import CONTEXT_BUDGET_CHARS, SYSTEM_PROMPT, prompt_text, sanitize
from hawkeye_env.tasks.registry import get_task, solution_source
from hawkeye_env.tasks.selection import select_tasks
from units.lib.index import list_units, unit_file

UNIT_TEMPLATE = """\
# Unit {name}: {title}
Strategy: {strategy}
Precisions: {precisions}

{summary}

## Reference computation (module `units.{name}.reference`)
```python
{reference}```

## Reply format
Write the Triton kernel module that computes this reference with the strategy above, as the whole
module in a single fenced block:
```python
<complete source>
```"""


def fenced(source: str) -> str:
    """``source`` as the reply the env parses: one ```python fenced block."""
    return "```python\n" + (source if source.endswith("\n") else source + "\n") + "```"


def split_tasks(seed: int = 0, eval_fraction: float = 0.25, tasks: str | Sequence[str] | None = None,
                eval_tasks: str | Sequence[str] | None = None) -> dict[str, list]:
    """The tasks ``tasks`` selects (``select_tasks``: ids or ``split:NAME``; None: every task) as
    ``{"train": [...], "eval": [...]}`` (each sorted), holding whole tasks out.

    With ``eval_tasks`` (a selection too) those are held out and ``tasks`` is trained on (None:
    every other task); a task in both raises ``ValueError``. Without it, ``eval_fraction`` of the
    tasks is held out, deterministically in ``seed`` (ids sorted, then shuffled by
    ``random.Random(seed)``); with ``eval_fraction > 0`` at least one task is held out and at least
    one kept for training. ``KeyError`` for an unknown id or split (``select_tasks``)."""
    if not 0 <= eval_fraction < 1:
        raise ValueError(f"eval_fraction must be in [0, 1), not {eval_fraction}")
    ids = sorted(select_tasks(tasks or None))
    if eval_tasks:
        held = sorted(select_tasks(eval_tasks))
        shared = sorted(set(ids).intersection(held)) if tasks else []
        if shared:
            raise ValueError(f"{len(shared)} task(s) both trained on and held out, e.g. {shared[0]}: "
                             "tasks and eval_tasks must not share a task")
        train = sorted(set(ids).difference(held))
        if not train:
            raise ValueError("eval_tasks holds out every task: no task left to train on")
        return {"train": train, "eval": held}
    random.Random(seed).shuffle(ids)
    n_eval = 0 if eval_fraction == 0 else min(len(ids) - 1, max(1, round(eval_fraction * len(ids))))
    return {"train": sorted(ids[n_eval:]), "eval": sorted(ids[:n_eval])}


def env_prompts(task_ids: Sequence[str], context: str = "docs", device: str = "auto",
                context_budget_chars: int = CONTEXT_BUDGET_CHARS) -> dict[str, dict]:
    """The env's first observation per task: ``{task: {"messages": [...], "prompt": str}}``."""
    if not task_ids:
        return {}
    env = KernelOptEnv(tasks=list(task_ids), store=":memory:", device=device, context=context,
                       context_budget_chars=context_budget_chars)
    try:
        out = {}
        for task_id in task_ids:
            obs, _ = env.reset(options={"task": task_id})
            out[task_id] = {"messages": json.loads(obs["messages"]), "prompt": obs["prompt"]}
        return out
    finally:
        env.close()


def unit_messages(name: str) -> list[dict[str, str]] | None:
    """``[system, user]`` asking for unit ``name``'s strategy on its reference; None without one."""
    unit = next(u for u in list_units(False) if u.name == name)
    reference = unit_file(unit, "reference.py")
    if not reference:
        return None
    user = UNIT_TEMPLATE.format(name=unit.name, title=unit.title, strategy=unit.strategy,
                                precisions=", ".join(unit.precisions), summary=unit.summary, reference=reference)
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": sanitize(user)}]


def _row(kind: str, name: str, messages: list[dict[str, str]], prompt: str, answer: str) -> dict:
    return {"kind": kind, "task": name, "prompt": messages, "completion": [{"role": "assistant", "content": answer}],
            "prompt_text": prompt, "completion_text": answer}


def sft_examples(task_ids: Sequence[str], context: str = "docs", include_units: bool = True, device: str = "auto",
                 context_budget_chars: int = CONTEXT_BUDGET_CHARS) -> list[dict]:
    """SFT rows for ``task_ids`` (expert solutions) plus, with ``include_units``, every runnable unit.

    Each row: ``kind`` (``task``/``unit``), ``task`` (task id or unit name), ``prompt`` (chat messages),
    ``completion`` (one assistant message), and the same as plain text in ``prompt_text`` /
    ``completion_text``. Tasks without a shipped solution are skipped.
    """
    rows = []
    prompts = env_prompts(task_ids, context, device, context_budget_chars)
    for task_id in task_ids:
        spec = get_task(task_id)
        if spec.solution is None:
            continue
        p = prompts[task_id]
        rows.append(_row("task", task_id, p["messages"], p["prompt"], fenced(solution_source(spec))))
    if include_units:
        for unit in list_units(False):
            messages = unit_messages(unit.name)
            kernel = unit_file(unit, "kernel.py")
            if messages and kernel:
                rows.append(_row("unit", unit.name, messages, prompt_text(messages), fenced(kernel)))
    return rows


def grpo_prompts(task_ids: Sequence[str], context: str = "docs", device: str = "auto",
                 context_budget_chars: int = CONTEXT_BUDGET_CHARS) -> list[dict]:
    """GRPO rows: ``prompt`` (the env's messages) and ``task`` (passed to the reward function)."""
    prompts = env_prompts(task_ids, context, device, context_budget_chars)
    return [{"prompt": prompts[t]["messages"], "task": t} for t in task_ids]


__all__ = ["UNIT_TEMPLATE", "env_prompts", "fenced", "grpo_prompts", "sft_examples", "split_tasks", "unit_messages"]
