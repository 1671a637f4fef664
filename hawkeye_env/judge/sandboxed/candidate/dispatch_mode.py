"""``JudgeDispatchMode``: the base of the judge's own ``TorchDispatchMode`` recorders
(``guards.OpRecorder``, ``plan_recorder.PlanRecorder``), which run in candidate workers.

torch wraps every mode's ``__torch_dispatch__`` in ``torch._disable_dynamo``, whose first call
imports ``torch._dynamo`` to build the disabled function: 1.0 s of CPU on an idle core (1.4-4.1 s
with two verdicts in flight on a 2-core machine; ``HAWKEYE_PROFILE_DIR`` profiles of a CPU
worker's first candidate call), paid by every candidate worker, which never traces with dynamo
(``torch.compile`` is outside the candidate contract, ``static_allowlist``). A subclass's
function is marked as its own disabled form, which is what the wrapper caches after that import,
so the wrapper calls it directly.
"""

from __future__ import annotations

from torch.utils._python_dispatch import TorchDispatchMode

# The attribute torch._disable_dynamo's wrapper caches the disabled function under (torch/_compile.py).
DISABLED_ATTR = "__dynamo_disable"


class JudgeDispatchMode(TorchDispatchMode):
    """A ``TorchDispatchMode`` whose ``__torch_dispatch__`` never imports ``torch._dynamo``."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        raw = getattr(cls.__dict__.get("__torch_dispatch__"), "__wrapped__", None)
        if callable(raw) and not hasattr(raw, DISABLED_ATTR):
            setattr(raw, DISABLED_ATTR, raw)


__all__ = ["DISABLED_ATTR", "JudgeDispatchMode"]
