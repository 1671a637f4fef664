"""``NotCheckableOnCPU``: what a kernel launch raises under Triton's CPU interpreter when the kernel
uses something the interpreter cannot compute (inline PTX, a libdevice function with no numpy
counterpart). The kernel may be correct on a GPU, so the judge reports "not checkable on CPU"
instead of a runtime error. Raised by ``interpreter_gaps`` and ``interpreter_libdevice``; the
launch raises this class itself, not Triton's ``InterpreterError`` around it.
"""

from __future__ import annotations


class NotCheckableOnCPU(RuntimeError):
    """A kernel uses ``reason`` (a feature the CPU interpreter cannot run); not the candidate's error."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"not checkable on CPU: {reason}")
        self.reason = reason


def not_checkable_cause(exc: BaseException | None) -> NotCheckableOnCPU | None:
    """The ``NotCheckableOnCPU`` in ``exc``'s chain of causes and contexts, or None."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, NotCheckableOnCPU):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def failure_fields(exc: BaseException) -> dict:
    """The reply fields a runtime error ``exc`` adds: ``{"failure": "not_checkable_on_cpu"}`` when
    the CPU interpreter could not run a kernel, else nothing (``Failure`` in the verdict)."""
    return {"failure": "not_checkable_on_cpu"} if not_checkable_cause(exc) is not None else {}


__all__ = ["NotCheckableOnCPU", "failure_fields", "not_checkable_cause"]
