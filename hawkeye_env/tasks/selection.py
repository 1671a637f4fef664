"""Which tasks a run uses: task ids, or a split of the registered tasks.

Every task belongs to one split, ``train``, ``validation`` or ``test``. A generated task's split is
in its folder's index (``hawkeye tasks generate`` assigns it by the hash of the task's operator
graph, ``generate/splits.py``, so no graph spans two splits); every other task (the curated suite,
imported KernelBench problems, hand-written folders) is held out as ``test``.

A selection is what ``gymnasium.make("hawkeye/KernelOpt-v3", tasks=...)``, ``hawkeye eval`` and the
server take: None (every task), a split (``"split:train"``), task ids, or a list mixing both::

    >>> select_tasks(["vector_add_fp32", "softmax_fp32"])
    ('vector_add_fp32', 'softmax_fp32')
    >>> "gemm_bf16" in select_tasks("split:test")
    True
"""

from __future__ import annotations

from collections.abc import Sequence

from hawkeye_env.tasks.registry import get_task, indexed_tasks, registered_ids

SPLITS = ("train", "validation", "test")
SPLIT_PREFIX = "split:"
HELD_OUT = "test"


def task_split(task_id: str) -> str:
    """``task_id``'s split: its index entry's, else ``HELD_OUT``."""
    entry = indexed_tasks().get(task_id)
    return entry.get("split", HELD_OUT) if entry else HELD_OUT


def split_ids(split: str) -> list[str]:
    """Ids of the registered tasks in ``split``, in registration order, none imported."""
    if split not in SPLITS:
        raise KeyError(f"unknown split {split!r}; splits: {', '.join(SPLITS)}")
    index = indexed_tasks()
    return [i for i in registered_ids() if (index[i].get("split", HELD_OUT) if i in index else HELD_OUT) == split]


def select_tasks(selection: str | Sequence[str] | None) -> tuple[str, ...]:
    """The task ids ``selection`` names (module docstring), each once, in order; ``KeyError`` for an
    unknown id or split, ``ValueError`` when it names none. An indexed task is not imported."""
    if selection is None:
        return tuple(registered_ids())
    items = [selection] if isinstance(selection, str) else list(selection)
    known = set(registered_ids())
    ids: list[str] = []
    for item in (part.strip() for entry in items for part in entry.split(",")):
        if item.startswith(SPLIT_PREFIX):
            ids += split_ids(item.removeprefix(SPLIT_PREFIX))
        elif item in known:
            ids.append(item)
        elif item:
            get_task(item)  # a folder registered since, or KeyError listing the known ids
            ids.append(item)
    if not ids:
        raise ValueError(f"the selection {selection!r} names no task")
    return tuple(dict.fromkeys(ids))
