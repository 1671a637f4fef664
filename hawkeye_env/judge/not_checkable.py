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


__all__ = ["NotCheckableOnCPU"]
