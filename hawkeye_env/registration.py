"""The one place the package's environments are registered: Gymnasium's and verifiers' plugin.

``import hawkeye_env`` calls ``register_envs()``; calling it again is a no-op. Registration imports
neither torch nor the env module: the entry point is a string, resolved by ``gymnasium.make``::

    import gymnasium, hawkeye_env
    env = gymnasium.make("hawkeye/KernelOpt-v3", tasks=["vector_add_fp32"], store=":memory:")

verifiers 0.4 imports its plugin id ``hawkeye-env`` as the ``hawkeye_env`` package and reads the
names in its ``__all__``: ``VERIFIERS_ENTRY_POINTS``, each resolved by ``verifiers_entry_point``
on first access, so verifiers stays an optional extra.
"""

from __future__ import annotations

import importlib
import os

KERNEL_OPT_ID = "hawkeye/KernelOpt-v3"
# Set by the judge in the environment of its own worker processes (``spawn.launch``): they never
# make an env, and importing gymnasium cost each of them 0.27 CPU s at start-up on an idle host.
JUDGE_PROCESS_ENV = "HAWKEYE_JUDGE_PROCESS"
VERIFIERS_ENTRY_POINTS = {
    "KernelTaskset": "hawkeye_env.adapters.verifiers_env:KernelTaskset",
    "KernelMultiTurnEnv": "hawkeye_env.adapters.verifiers_env:KernelMultiTurnEnv",
    "KernelChatHarness": "hawkeye_env.adapters.verifiers_env:KernelChatHarness",
}


def register_envs() -> None:
    """Register ``hawkeye/KernelOpt-v3`` unless it already is (idempotent).

    ``nondeterministic=True``: the judge draws fresh trial inputs per evaluation, answers repeats
    from its store and times on the GPU, so the same action need not give the same ``info`` twice.
    No ``max_episode_steps``: the env truncates itself at ``max_turns``. The vector entry point
    (``gymnasium.make_vec(..., vectorization_mode="vector_entry_point")``) judges each step's
    candidates of all sub-envs in one ``evaluate_many`` batch (``hawkeye_env/vector.py``).
    """
    import gymnasium

    if KERNEL_OPT_ID in gymnasium.registry:
        return
    gymnasium.register(id=KERNEL_OPT_ID, entry_point="hawkeye_env.env:KernelOptEnv",
                       vector_entry_point="hawkeye_env.vector:KernelOptVectorEnv", nondeterministic=True)


def register_on_import() -> None:
    """What ``import hawkeye_env`` does: ``register_envs()``, except in the judge's own worker
    processes (``JUDGE_PROCESS_ENV``)."""
    if os.environ.get(JUDGE_PROCESS_ENV) != "1":
        register_envs()


def verifiers_entry_point(name: str) -> type:
    """The class ``VERIFIERS_ENTRY_POINTS[name]`` names (imports the verifiers adapter; ``KeyError``
    for another name, ``ImportError`` with the install hint when verifiers is missing)."""
    module, _, attr = VERIFIERS_ENTRY_POINTS[name].partition(":")
    return getattr(importlib.import_module(module), attr)


__all__ = ["JUDGE_PROCESS_ENV", "KERNEL_OPT_ID", "VERIFIERS_ENTRY_POINTS", "register_envs", "register_on_import",
           "verifiers_entry_point"]
