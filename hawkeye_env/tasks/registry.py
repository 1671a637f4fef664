"""The task registry: every shipped task, looked up by id.

Tasks are modules holding ``Model``, ``get_inputs``, ``get_init_inputs`` and ``SPEC``. Adding a
task means adding its module path to ``TASK_MODULES``; nothing else registers itself at import.
"""

from __future__ import annotations

import importlib
import importlib.util
from functools import cache
from types import ModuleType

from hawkeye_env.tasks.spec import TaskSpec

TASK_MODULES: tuple[str, ...] = (
    "hawkeye_env.tasks.conformance.vector_add_fp32",
    "hawkeye_env.tasks.conformance.softmax_fp32",
    "hawkeye_env.tasks.conformance.rmsnorm_bf16",
    "hawkeye_env.tasks.conformance.gemm_bf16",
)


@cache
def _specs() -> dict[str, TaskSpec]:
    specs: dict[str, TaskSpec] = {}
    for path in TASK_MODULES:
        spec = importlib.import_module(path).SPEC
        if spec.id in specs:
            raise RuntimeError(f"duplicate task id {spec.id} in {path}")
        specs[spec.id] = spec
    return specs


def list_tasks() -> list[TaskSpec]:
    """All registered tasks, in registration order."""
    return list(_specs().values())


def get_task(task_id: str) -> TaskSpec:
    """The spec of ``task_id``; ``KeyError`` lists the known ids."""
    try:
        return _specs()[task_id]
    except KeyError:
        known = ", ".join(_specs())
        raise KeyError(f"unknown task {task_id!r}; known tasks: {known}") from None


def task_module(spec: TaskSpec) -> ModuleType:
    """The KernelBench-style module (``Model``, ``get_inputs``, ``get_init_inputs``)."""
    return importlib.import_module(spec.module)


def solution_source(spec: TaskSpec) -> str:
    """Source text of the task's expert solution, as a candidate would submit it."""
    if spec.solution is None:
        raise KeyError(f"task {spec.id} ships no solution")
    origin = importlib.util.find_spec(spec.solution).origin
    with open(origin, encoding="utf-8") as f:
        return f.read()
