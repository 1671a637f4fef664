"""Why a gate drops a task: ``GateFailure`` carries a short reason code (the report counts by it)
and the detail (where: shape, distribution, output; the measured figure)."""

from __future__ import annotations


class GateFailure(Exception):
    """Raised by a gate: ``code`` is one of the gate's reason codes, ``detail`` says where and how."""

    def __init__(self, code: str, detail: str = ""):
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code, self.detail = code, detail
