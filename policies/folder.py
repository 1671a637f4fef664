"""A policy that replays pre-generated solutions from a folder, so any agent's outputs are judged.

The folder holds one file per problem and sample, named as KernelBench's generation scripts
(``scripts/generate_samples.py``) write them into ``runs/<run_name>/``::

    level_<level>_problem_<problem id>_sample_<sample id>_kernel.py

where the problem id is the number that starts the problem's file name (``19`` for
``19_ReLU.py``). Observations name imported KernelBench tasks (``kb_level1_19_relu``: level 1,
problem 19); reply ``i`` of ``n`` is the file with sample id ``trajectory + i`` (the
observation's trajectory, 0 unless a resumed eval asks for the rest). A missing file is an empty
action (the judge's ``no_source``); a file's text is returned as a fenced python block.

Example::

    from policies import make_policy
    policy = make_policy("folder", folder="runs/my_run")
    [[reply]] = policy.sample([{"task_id": "kb_level1_19_relu", "prompt": "", "source": "",
                                "feedback": "", "turn": 0}], n=1)
"""

from __future__ import annotations

import re
from pathlib import Path

TASK_ID = re.compile(r"^kb_level(?P<level>\d+)_(?P<problem>\d+)(_|$)")


def solution_path(folder: str | Path, level: int, problem: int, sample: int) -> Path:
    """Where KernelBench's generation scripts write ``sample`` of ``problem`` at ``level``."""
    return Path(folder) / f"level_{level}_problem_{problem}_sample_{sample}_kernel.py"


def problem_of(task_id: str) -> tuple[int, int] | None:
    """``(level, problem id)`` of an imported KernelBench task id, or None for other tasks."""
    m = TASK_ID.match(task_id)
    return (int(m["level"]), int(m["problem"])) if m else None


class FolderPolicy:
    """Reads sample ``i`` of each observation's problem from ``folder`` (module docstring)."""

    name = "folder"

    def __init__(self, folder: str | Path, seed: int = 0, **_ignored):
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise FileNotFoundError(f"no solutions folder {self.folder}")

    def describe(self) -> dict:
        return {"folder": str(self.folder.resolve())}

    def _reply(self, task_id: str, sample: int) -> str:
        where = problem_of(task_id)
        if where is None:
            return ""
        path = solution_path(self.folder, *where, sample)
        if not path.is_file():
            return ""
        return f"```python\n{path.read_text(encoding='utf-8').rstrip()}\n```\n"

    def sample(self, observations: list[dict], n: int) -> list[list[str]]:
        return [[self._reply(obs["task_id"], int(obs.get("trajectory", 0)) + i) for i in range(n)]
                for obs in observations]


__all__ = ["FolderPolicy", "problem_of", "solution_path"]
