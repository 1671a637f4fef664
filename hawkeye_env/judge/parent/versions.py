"""What a verdict is keyed and reported by: the device it ran on and the software that shaped it.

``software_versions`` hashes the judge's and the reward's sources and the task's module, so a
changed check, tolerance or reference never serves a stale verdict from the store.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import platform
from functools import cache
from pathlib import Path

import torch

from hawkeye_env.judge.parent.launch import isolation
from hawkeye_env.judge.parent.record_replay import mode as replay_mode
from hawkeye_env.tasks.spec import TaskSpec
from reward import REWARD_VERSION


def resolve_device(device: str) -> str:
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device not in ("cpu", "cuda"):
        raise ValueError(f"device must be cpu, cuda or auto, not {device!r}")
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("device cuda requested but torch sees no CUDA GPU")
    return device


@cache
def _source_digest(*modules: str) -> str:
    """Short hash of the source files of ``modules`` (packages: every ``.py`` file below them)."""
    digest = hashlib.sha256()
    for name in modules:
        origin = Path(importlib.util.find_spec(name).origin)
        files = sorted(origin.parent.rglob("*.py")) if origin.name == "__init__.py" else [origin]
        for f in files:
            digest.update(f.read_bytes())
    return digest.hexdigest()[:12]


def software_versions(device: str, task: TaskSpec | None = None) -> dict[str, str]:
    """Versions that change timings or numerics, used in store keys and reported in verdicts.

    ``judge`` hashes the judge's and the reward's sources and ``task`` the task module, so editing
    a check, a tolerance or a reference never serves a stale verdict from the store.
    """
    versions = {"python": platform.python_version(), "torch": torch.__version__}
    versions["judge"] = _source_digest("hawkeye_env.judge", "reward")
    if task is not None:
        versions["task"] = _source_digest(task.module)
    try:
        versions["triton"] = importlib.metadata.version("triton")
    except importlib.metadata.PackageNotFoundError:
        versions["triton"] = "missing"
    versions["reward"] = REWARD_VERSION
    versions["sandbox"] = isolation.mode()
    versions["replay"] = replay_mode(device)
    if device == "cuda":
        versions["gpu"] = torch.cuda.get_device_name()
        versions["cuda"] = str(torch.version.cuda)
    else:
        versions["gpu"] = "cpu-interpreter"
    return versions


__all__ = ["resolve_device", "software_versions"]
