"""Roofline counts of generated tasks as expressions over their shape keys.

Both counts are lower bounds, never estimates (a floor above the true minimum would turn an honest
kernel's time into ``impossible_time``): bytes are every tensor a kernel must read or write, each
moved once; FLOPs count the arithmetic of the op itself (``2 M N K`` for a GEMM, a few per element
for an activation), never the extra work of an unfused implementation.

    >>> size_expr(("M", "2 * N"), "bfloat16")
    '2 * (M) * (2 * N)'
    >>> evaluate("2 * (M) * (2 * N)", {"M": 3, "N": 5})
    60.0
"""

from __future__ import annotations

from hawkeye_env.tasks.generate.dims import nbytes
from hawkeye_env.tasks.generate.draft import TaskDraft


def numel_expr(shape: tuple[str, ...]) -> str:
    """The element count of a tensor of ``shape`` (expressions), as one expression."""
    return " * ".join(f"({d})" for d in shape) if shape else "1"


def size_expr(shape: tuple[str, ...], dtype: str) -> str:
    """Bytes of a tensor of ``shape`` and ``dtype``, as one expression."""
    return f"{nbytes(dtype)} * {numel_expr(shape)}"


def default_bytes(draft: TaskDraft) -> str:
    """Every input, parameter and the output moved once."""
    parts = [size_expr(t.shape, t.dtype) for t in (*draft.inputs, *draft.params)]
    parts.append(size_expr(draft.out_shape, draft.out_dtype))
    return " + ".join(parts)


def bytes_expr(draft: TaskDraft) -> str:
    """The draft's own bytes expression, or ``default_bytes``."""
    return draft.bytes_moved or default_bytes(draft)


def evaluate(expr: str, shape: dict) -> float:
    """``expr`` at ``shape`` (the shape keys, ``min`` and ``max`` are its only names)."""
    names = {"__builtins__": {}, "min": min, "max": max}
    return float(eval(expr, names, dict(shape)))  # noqa: S307 - the grammar's own expressions
