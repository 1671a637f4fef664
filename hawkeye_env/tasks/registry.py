"""The task registry: every shipped task, looked up by id.

Tasks are modules holding ``Model``, ``get_inputs``, ``get_init_inputs`` and ``SPEC``. A curated
task is one folder, ``hawkeye_env/tasks/<id>/``: ``task.py`` (that module), ``solution.py`` (the
expert ``ModelNew``) and ``__init__.py``, whose ``ORDER`` is the task's place in the list
(``hawkeye tasks list``, the environment's tasks). Adding a task means adding its folder: the
registry finds every ``<id>/task.py`` of this package (``shared/`` holds helpers several tasks
use, and no task); nothing registers itself at import.

User task folders (e.g. KernelBench files converted by ``hawkeye tasks import-kernelbench``, or
tasks written by ``hawkeye tasks generate``) hold task modules as top-level ``.py`` files or as
``<name>/task.py`` folders, and a ``TASK_FOLDER_MARKER`` file (``task_dirs`` says what else: an
index read lazily, archives). They are registered
at run time by ``register_tasks_from(folder)``, or by listing them in the ``HAWKEYE_TASK_DIRS``
environment variable (``os.pathsep``-separated). Only those folders are read: a folder that merely
lies on ``sys.path`` is never scanned, so a module planted there cannot become a task of the
trusted parent. Every judge job carries the parent's user task folders, which the worker
registers before it looks its task up (a standby worker started before a folder was registered
still finds it).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from functools import cache
from pathlib import Path
from types import ModuleType

from hawkeye_env.tasks.spec import TaskSpec
from hawkeye_env.tasks.task_dirs import eager_modules, index_stamp, read_index, resolve_entry

TASKS_PACKAGE = "hawkeye_env.tasks"
TASKS_DIR = Path(__file__).parent
TASK_FILE = "task.py"


TASK_DIRS_ENV = "HAWKEYE_TASK_DIRS"
TASK_FOLDER_MARKER = "HAWKEYE_TASKS"


def user_task_dirs() -> list[str]:
    """User task folders: the ``HAWKEYE_TASK_DIRS`` entries (``register_tasks_from`` adds to it),
    archives as the folders they unpack to (``task_dirs.resolve_entry``)."""
    dirs = [resolve_entry(d) for d in os.environ.get(TASK_DIRS_ENV, "").split(os.pathsep) if d]
    return list(dict.fromkeys(dirs))


def _folder_modules(folder: str) -> list[str]:
    if folder not in sys.path:
        sys.path.insert(0, folder)
    return eager_modules(folder)


def indexed_tasks() -> dict[str, dict]:
    """Index entries of the user folders that have an index, by task id, read without importing
    any task (``task_dirs.read_index``); the folders go on ``sys.path`` for ``get_task``."""
    return _indexed(tuple((folder, index_stamp(folder)) for folder in user_task_dirs()))


@cache
def _indexed(stamped: tuple[tuple[str, tuple | None], ...]) -> dict[str, dict]:
    found: dict[str, dict] = {}
    for folder, _ in stamped:
        entries = read_index(folder)
        if entries and folder not in sys.path:
            sys.path.insert(0, folder)
        for task_id, entry in entries.items():
            if task_id in found:
                raise RuntimeError(f"duplicate task id {task_id} in the indexes of {folder}")
            found[task_id] = entry
    return found


def registered_ids() -> list[str]:
    """Every registered task id, in registration order, without importing an indexed task."""
    specs = _specs()
    return list(specs) + [i for i in indexed_tasks() if i not in specs]


def _order(name: str) -> int:
    order = getattr(importlib.import_module(f"{TASKS_PACKAGE}.{name}"), "ORDER", None)
    if not isinstance(order, int):
        raise RuntimeError(f"hawkeye_env/tasks/{name}/__init__.py sets no ORDER (the task's place in the list)")
    return order


def _curated_modules() -> list[str]:
    """Module paths of the curated tasks (``<id>/task.py`` of this package), by ``ORDER``."""
    names = [p.parent.name for p in TASKS_DIR.glob(f"*/{TASK_FILE}")]
    order = {name: _order(name) for name in names}
    return [f"{TASKS_PACKAGE}.{name}.task" for name in sorted(names, key=lambda n: (order[n], n))]


@cache
def _specs() -> dict[str, TaskSpec]:
    specs: dict[str, TaskSpec] = {}
    paths = _curated_modules() + [m for d in user_task_dirs() for m in _folder_modules(d)]
    for path in paths:
        spec = importlib.import_module(path).SPEC
        if spec.id in specs:
            raise RuntimeError(f"duplicate task id {spec.id} in {path}")
        specs[spec.id] = spec
    return specs


def register_tasks_from(folder: str | os.PathLike) -> list[TaskSpec]:
    """Register every task module in ``folder`` (top-level ``.py`` files or ``<name>/task.py``
    defining ``SPEC``; a folder or an archive) for this process and its children; returns the
    specs it imported (none for a folder with an index, whose tasks load on first ``get_task``)."""
    folder = resolve_entry(str(folder))
    dirs = [d for d in os.environ.get(TASK_DIRS_ENV, "").split(os.pathsep) if d]
    if folder not in dirs:
        os.environ[TASK_DIRS_ENV] = os.pathsep.join([*dirs, folder])
    names = set(_folder_modules(folder))
    _specs.cache_clear()
    return [s for s in _specs().values() if s.module in names]


def list_tasks() -> list[TaskSpec]:
    """All registered tasks, in registration order (this imports every indexed task:
    ``registered_ids`` lists them without)."""
    specs = _specs()
    return list(specs.values()) + [get_task(i) for i in indexed_tasks() if i not in specs]


def get_task(task_id: str) -> TaskSpec:
    """The spec of ``task_id`` (an indexed task's module is imported now); ``KeyError`` lists
    the known ids (at most 50 of them)."""
    if task_id not in _specs():
        _specs.cache_clear()  # a task folder may have been registered since
    if task_id in _specs():
        return _specs()[task_id]
    entry = indexed_tasks().get(task_id)
    if entry is None:
        known = registered_ids()
        more = f" and {len(known) - 50} more" if len(known) > 50 else ""
        raise KeyError(f"unknown task {task_id!r}; known tasks: {', '.join(known[:50])}{more}")
    spec = importlib.import_module(entry["module"]).SPEC
    if spec.id != task_id:
        raise RuntimeError(f"{entry['module']} defines task {spec.id!r}, its index says {task_id!r}")
    return spec


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
