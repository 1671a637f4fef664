"""Best-of-N over many tasks as one run per task, merged: resumable at task granularity.

    hawkeye eval --policy search --n 32 --device cuda --split-tasks --out out/suite

``run_by_task`` runs ``run_eval`` for each task into ``<out>/<task>/`` and re-merges every finished
task into ``<out>/`` (``evals.merge``) after each one, so a run cut short by a machine lease keeps
a complete report of the tasks it finished. Re-running with the same ``--out`` keeps every task
whose ``results.json`` was made with the same policy description (``policies.base.describe``:
model, endpoint, sampling parameters, seed), n, turns, context and device and runs only the rest
(an unfinished task's ``samples.jsonl`` gives back the replies it had): this resumes across
judge changes too (the verdict store would judge everything again, since its keys include the
judge's sources), and the merged report lists each task's judge versions.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

from evals.best_of_n import as_store, run_eval
from evals.merge import merge_runs
from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator, resolve_device
from hawkeye_env.tasks.selection import select_tasks
from policies.base import describe

log = logging.getLogger(__name__)


def _finished(part: Path, want: dict) -> bool:
    """Whether ``part`` holds a finished run made with the settings in ``want``."""
    try:
        cfg = json.loads((part / "results.json").read_text(encoding="utf-8"))["config"]
    except (OSError, ValueError, KeyError):
        return False
    return all(cfg.get(key) == value for key, value in want.items())


def run_by_task(policy, tasks: str | list[str] | None, out_dir: str | Path, n: int = 4, turns: int = 1,
                context: str = "docs", device: str = "auto", budget_s: float | None = None, **eval_kwargs) -> dict:
    """``run_eval`` per task ``tasks`` selects (ids or ``split:NAME``, as the env takes them; None:
    every task) into ``<out_dir>/<task>/``, skipping finished ones, merging after each task into
    ``out_dir``; returns the merged ``results.json`` dict (empty when no task finished).
    ``budget_s``: start no task after this many seconds (a machine lease ends: a task cut in the
    middle would leave nothing), the tasks left for a re-run. ``eval_kwargs`` go to ``run_eval``
    (workers, store, wandb_mode, config, gpus, backend...)."""
    started = time.monotonic()
    tasks = list(select_tasks(tasks))
    if device == "auto" and eval_kwargs.get("backend", "local") == "local":
        device = resolve_device(device)
    out = Path(out_dir)
    description = describe(policy)
    want = {"policy": description["name"], "policy_config": description, "n": n, "turns": turns, "context": context}
    if device != "auto":
        want["device"] = device
    todo = [task for task in tasks if not _finished(out / task, {**want, "tasks": [task]})]
    if device == "cuda" and eval_kwargs.get("backend", "local") == "local" and todo:
        # Every remaining task's baselines first, all GPUs in parallel; one task at a time would
        # leave its GPUs idle while its first verdict had them measured.
        judge = Evaluator(as_store(eval_kwargs.get("store")), eval_kwargs.get("config") or EvalConfig())
        judge.prefetch_baselines(todo, device, eval_kwargs.get("gpus"))
    parts: list[Path] = []
    merged: dict = {}
    for task in tasks:
        part = out / task
        if task in todo:
            if budget_s is not None and time.monotonic() - started > budget_s:
                log.warning("%s: not started, the %.0f s budget is spent; re-run with the same --out", task, budget_s)
                continue
            run_eval(policy, [task], n=n, turns=turns, context=context, device=device, out_dir=part, **eval_kwargs)
        else:
            log.info("%s: kept the finished run in %s", task, part)
        parts.append(part)
        merged = merge_runs(parts, out)
    return merged


__all__ = ["run_by_task"]
