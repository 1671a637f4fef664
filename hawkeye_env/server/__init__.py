"""``hawkeye serve``: ``hawkeye/KernelOpt-v3`` over the OpenEnv protocol (HTTP + WebSocket).

=====================  ===========================================================================
module                 what it holds
=====================  ===========================================================================
``judge_queue.py``     ``JudgeQueue``: one evaluator shared by every session, candidates batched
                       into ``evaluate_many`` (no OpenEnv needed)
``models.py``          the OpenEnv ``KernelAction`` / ``KernelObservation`` / ``KernelState``
``environment.py``     ``HawkeyeEnvironment``: an OpenEnv ``Environment`` over ``KernelOptEnv``
``app.py``             ``make_app`` (OpenEnv's ``HTTPEnvServer`` plus ``/judge``), ``serve``
``client.py``          ``HawkeyeEnvClient``: OpenEnv ``EnvClient`` (async; ``.sync()`` for blocking use)
=====================  ===========================================================================

Everything but ``judge_queue`` needs the ``serve`` extra: ``pip install 'hawkeye-env[serve]'``.
"""

from __future__ import annotations

INSTALL_HINT = "serving the env needs openenv-core: pip install 'hawkeye-env[serve]' (or pip install openenv-core)"


def require_openenv() -> None:
    """Raise ``ImportError`` with the install hint when ``openenv-core`` is missing."""
    try:
        import openenv.core.env_server  # noqa: F401
    except ImportError as exc:
        raise ImportError(INSTALL_HINT) from exc


__all__ = ["INSTALL_HINT", "require_openenv"]
