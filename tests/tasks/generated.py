"""Helpers for the generator's tests: write a draft or a hand-written task module into a folder on
``sys.path`` and import it, forgetting it afterwards (``planted`` is a context manager)."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path

from hawkeye_env.task_gates.pipeline import import_task
from hawkeye_env.tasks.generate.writer import write_task


@contextmanager
def planted(folder: Path):
    """Restore ``sys.path`` and drop the modules imported from ``folder`` on exit."""
    path = list(sys.path)
    try:
        yield folder
    finally:
        sys.path[:] = path
        for name, module in list(sys.modules.items()):
            if str(folder) in str(getattr(module, "__file__", "") or ""):
                del sys.modules[name]


def write_draft(folder: Path, draft, task_id: str):
    write_task(folder, draft, task_id, "")
    return import_task(folder, task_id)


def write_source(folder: Path, task_id: str, source: str):
    """A hand-written task module at ``folder/<task_id>/task.py`` (its SPEC's module must be ``<task_id>.task``)."""
    package = folder / task_id
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / "task.py").write_text(source)
    return import_task(folder, task_id)
