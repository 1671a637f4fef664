"""veRL: a reward function with veRL's signature, its batch form, and the dataset rows to go with it.

veRL's reward worker loads ``compute_score`` from the config's ``custom_reward_function`` and calls
it as ``compute_score(data_source=..., solution_str=..., ground_truth=..., extra_info=...)``, one
response at a time (the naive reward manager; veRL >= 0.7 runs the responses of a step
concurrently in threads, so the shared judge batches them). veRL <= 0.6's batch reward manager
calls ``compute_score_batch(data_sources=..., solution_strs=..., ground_truths=..., extra_infos=...)``.
Here ``ground_truth`` is the task id; the score is the env's first-turn reward (reward v3) from the
one evaluator through the process's shared judge, returned as ``{"score": reward, "stage": ...,
"correct": ..., "error": ""}`` (veRL logs the extra keys). ``compute_score`` raises on a row it
cannot judge (an unknown task id); ``compute_score_batch`` scores such a row ``BAD_ROW_SCORE`` and
keeps every other row's score. Nothing here imports veRL: veRL imports this module.
Config for veRL >= 0.7 (README, veRL, gives veRL <= 0.6's)::

    reward.custom_reward_function.path=pkg://hawkeye_env.adapters.verl
    reward.custom_reward_function.name=compute_score

Dataset (``verl_rows("split:train")`` -> parquet): ``data_source`` ``hawkeye/KernelOpt-v3``, ``prompt``
the env's messages, ``reward_model.ground_truth`` the task id. The reward sees one finished response,
so the env's ``PROFILE`` action has no place here; veRL's multi-turn rollouts get it as a tool
(``verl_tool.KernelProfileTool``, rows from ``verl_rows(..., profile_tool=True)``).
"""

from __future__ import annotations

from collections.abc import Sequence

from hawkeye_env.adapters.common import score_reply, shared_judge, task_prompts
from hawkeye_env.registration import KERNEL_OPT_ID
from hawkeye_env.tasks.selection import task_split

VERDICT_KEYS = ("stage", "correct", "compiled", "timed")
INSTALL_HINT = ("veRL is not installed: pip install 'hawkeye-env[verl]' (veRL with its dependencies), or for "
                "the CPU test of its reward path pip install -e '.[dev]' && pip install --no-deps 'verl==0.9.1'")


#: Score of a batch row that could not be judged (an unknown task id, a reply that is not text):
#: neutral, so a group of such rows (one prompt, one bad ground truth) has zero advantage and moves
#: nothing, and the rest of the batch keeps its scores; ``stage`` says ``bad_row``, ``error`` why.
BAD_ROW_SCORE = 0.0


def _result(reward: float, verdict: dict, error: str = "") -> dict:
    return {"score": reward, **{k: verdict.get(k) for k in VERDICT_KEYS},
            "best_speedup": verdict.get("best_speedup") or 0.0, "error": error}


def _score_row(task_id, reply, judge) -> dict:
    """One batch row's result; a row that cannot be judged gets ``BAD_ROW_SCORE`` and its error."""
    try:
        if not isinstance(task_id, str) or not isinstance(reply, str):
            raise TypeError(f"ground_truth and solution_str must be text, not {type(task_id).__name__} "
                            f"and {type(reply).__name__}")
        return _result(*score_reply(task_id, reply, judge))
    except (KeyError, TypeError, ValueError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        return _result(BAD_ROW_SCORE, {"stage": "bad_row", "correct": False, "compiled": False, "timed": False},
                       f"{type(exc).__name__}: {message}")


def compute_score(data_source: str, solution_str: str, ground_truth: str, extra_info: dict | None = None) -> dict:
    """veRL's reward signature: the env's reward of ``solution_str`` on task ``ground_truth``."""
    reward, verdict = score_reply(ground_truth, solution_str)
    return _result(reward, verdict)


def compute_score_batch(data_sources: Sequence[str], solution_strs: Sequence[str], ground_truths: Sequence[str],
                        extra_infos: Sequence[dict | None] | None = None) -> list[dict]:
    """veRL's batch reward signature: every response judged concurrently, results in order. A row
    that cannot be judged (unknown task id, non-text reply) scores ``BAD_ROW_SCORE`` with ``stage``
    ``bad_row`` and its ``error``; every other row keeps its score."""
    from concurrent.futures import ThreadPoolExecutor

    if not len(solution_strs) == len(ground_truths) == len(data_sources):
        raise ValueError("data_sources, solution_strs and ground_truths must have one entry per response")
    judge = shared_judge()
    with ThreadPoolExecutor(max_workers=max(1, min(64, len(solution_strs)))) as pool:
        return list(pool.map(lambda pair: _score_row(pair[1], pair[0], judge), zip(solution_strs, ground_truths)))


def verl_rows(tasks: str | Sequence[str] | None, context: str = "docs", split: str | None = None,
              profile_tool: bool = False) -> list[dict]:
    """veRL RL-dataset rows (write them with ``pandas.DataFrame(rows).to_parquet``), one per task
    ``tasks`` selects: ids or ``split:NAME`` (``verl_rows("split:train")``; None: every task).
    ``extra_info.split`` is ``split``, else the task's own split (``selection.task_split``).
    ``profile_tool``: rows for veRL's tool agent loop (``agent_name`` ``tool_agent``) whose
    ``extra_info.tools_kwargs`` give the ``profile_kernel`` tool (``verl_tool.py``) the task."""
    rows = []
    for i, (task_id, messages) in enumerate(task_prompts(tasks, shared_judge(), context=context)):
        row = {"data_source": KERNEL_OPT_ID, "prompt": messages, "ability": "kernel",
               "reward_model": {"style": "rule", "ground_truth": task_id},
               "extra_info": {"split": split or task_split(task_id), "index": i, "context": context}}
        if profile_tool:
            row["agent_name"] = "tool_agent"
            row["extra_info"]["tools_kwargs"] = {"profile_kernel": {"create_kwargs": {"task": task_id}}}
        rows.append(row)
    return rows


__all__ = ["BAD_ROW_SCORE", "INSTALL_HINT", "compute_score", "compute_score_batch", "verl_rows"]
