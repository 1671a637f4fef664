"""The one place the package's Gymnasium environments are registered.

``import hawkeye_env`` calls ``register_envs()``; calling it again is a no-op. Registration imports
neither torch nor the env module: the entry point is a string, resolved by ``gymnasium.make``::

    import gymnasium, hawkeye_env
    env = gymnasium.make("hawkeye/KernelOpt-v2", tasks=["vector_add_fp32"], store=":memory:")
"""

from __future__ import annotations

import gymnasium

KERNEL_OPT_ID = "hawkeye/KernelOpt-v2"


def register_envs() -> None:
    """Register ``hawkeye/KernelOpt-v2`` unless it already is (idempotent).

    ``nondeterministic=True``: the judge draws fresh trial inputs per evaluation, answers repeats
    from its store and times on the GPU, so the same action need not give the same ``info`` twice.
    No ``max_episode_steps``: the env truncates itself at ``max_turns``. The vector entry point
    (``gymnasium.make_vec(..., vectorization_mode="vector_entry_point")``) judges each step's
    candidates of all sub-envs in one ``evaluate_many`` batch (``hawkeye_env/vector.py``).
    """
    if KERNEL_OPT_ID in gymnasium.registry:
        return
    gymnasium.register(id=KERNEL_OPT_ID, entry_point="hawkeye_env.env:KernelOptEnv",
                       vector_entry_point="hawkeye_env.vector:KernelOptVectorEnv", nondeterministic=True)


__all__ = ["KERNEL_OPT_ID", "register_envs"]
