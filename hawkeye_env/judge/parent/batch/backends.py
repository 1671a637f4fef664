"""Choosing where batches are judged: this machine's worker pool (``local``) or Ray actors (``ray``).

Both backends take the same ``evaluate_many(judge, jobs, ...)`` call (``evaluator.py``) and write
every verdict to the one store they were given; ``hawkeye eval --backend ray --ray-address auto``
and ``bench/throughput.py`` select them by name.
"""

from __future__ import annotations

from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator, resolve_device, software_versions
from hawkeye_env.judge.parent.store import ResultStore

BACKENDS = ("local", "ray")


def make_judge(backend: str, store: ResultStore | None = None, config: EvalConfig | None = None,
               ray_address: str | None = None):
    """An ``Evaluator`` (``local``) or a ``ray_backend.RayEvaluator`` (``ray``; ``ray_address``
    None starts a local Ray). Raises ImportError with the install hint when ray is missing."""
    if backend == "local":
        return Evaluator(store, config)
    if backend == "ray":
        from hawkeye_env.judge.parent.batch.ray_backend import RayEvaluator

        return RayEvaluator(store, config, address=ray_address)
    raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, not {backend!r}")


def judge_device(judge, device: str) -> str:
    """``device`` resolved where the judging happens: on this machine, or on the Ray cluster (whose
    driver may have no GPU of its own)."""
    method = getattr(judge, "resolve_device", None)
    return method(device) if method is not None else resolve_device(device)


def judge_versions(judge, device: str, task: str) -> dict[str, str]:
    """Software versions of the judging machines (without the per-task hash)."""
    method = getattr(judge, "versions", None)
    if method is None:
        return software_versions(device)
    versions = dict(method(task, device))
    versions.pop("task", None)
    return versions


__all__ = ["BACKENDS", "judge_device", "judge_versions", "make_judge"]
