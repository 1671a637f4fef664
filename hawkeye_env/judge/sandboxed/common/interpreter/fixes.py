"""One call that makes Triton's CPU interpreter run what a GPU runs, for every judge process.

``install_interpreter_fixes`` installs the bf16 arithmetic fix and the device-call fast path
(``cpu_backend.install_bf16_interpreter_fix``) and the interpreter's gaps (``interpreter_gaps``:
autotuning, libdevice, float scalar arguments, builtins reached outside ``triton.language``). It
patches Triton's own classes and modules only, never a candidate's, so the candidate's worker and
the trusted replay that rebuilds kernels from their source install the same fixes.
"""

from __future__ import annotations

import os


def interpreting() -> bool:
    """Whether kernels run under Triton's interpreter (``TRITON_INTERPRET`` true), decided
    without importing Triton: imported before that variable is set, Triton stays in GPU mode."""
    return os.environ.get("TRITON_INTERPRET", "0").strip().lower() in ("1", "true", "yes", "on", "y")


def install_interpreter_fixes() -> None:
    """Install every fix (module docstring). Idempotent; a no-op unless ``TRITON_INTERPRET`` is
    set. Call it in the process that runs the kernels, before the kernels' modules are imported."""
    if not interpreting():
        return
    from hawkeye_env.judge.sandboxed.common.interpreter.cpu_backend import install_bf16_interpreter_fix
    from hawkeye_env.judge.sandboxed.common.interpreter.gaps import install_interpreter_gaps

    install_bf16_interpreter_fix()
    install_interpreter_gaps()


__all__ = ["install_interpreter_fixes", "interpreting"]
