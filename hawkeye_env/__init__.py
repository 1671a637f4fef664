"""hawkeye-env: a trustworthy judge for LLM-written Triton kernels and its Gymnasium environment.

The package is also verifiers' plugin ``hawkeye-env`` (``vf-eval hawkeye-env``): ``__all__`` holds
the taskset and env classes verifiers looks up, loaded from the verifiers adapter on first access
(``hawkeye_env.registration``).
"""

from hawkeye_env.registration import VERIFIERS_ENTRY_POINTS, register_on_import, verifiers_entry_point
from hawkeye_env.registration import register_envs as register_envs  # the public call, re-exported

register_on_import()

__all__ = list(VERIFIERS_ENTRY_POINTS)


def __getattr__(name: str):
    if name in VERIFIERS_ENTRY_POINTS:
        return verifiers_entry_point(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
