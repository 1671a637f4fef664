"""``hawkeye serve``: ``hawkeye/KernelOpt-v3`` over the OpenEnv protocol (HTTP + WebSocket).

=====================  ===========================================================================
module                 what it holds
=====================  ===========================================================================
``limits.py``          the limits on one client: body and message size, idle time, candidates held
``fair_queue.py``      ``FairQueue``: per-client FIFO queues served round-robin, with bounds
``judge_queue.py``     ``JudgeQueue``: one evaluator shared by every session, at most ``workers``
                       candidates judged at once, taken fairly, verdicts handed back as they arrive
                       (no OpenEnv needed)
``guard.py``           ``ClientGuard``: the ASGI middleware that enforces the size and idle limits,
                       names each connection's client and notices when it leaves
``models.py``          the OpenEnv ``KernelAction`` / ``KernelObservation`` / ``KernelState``
``environment.py``     ``HawkeyeEnvironment``: an OpenEnv ``Environment`` over ``KernelOptEnv``
``app.py``             ``make_app`` (OpenEnv's ``HTTPEnvServer`` plus ``/judge``), ``serve``, and
                       ``app`` for ``uvicorn hawkeye_env.server.app:app`` (built from env vars)
``client.py``          ``HawkeyeEnvClient``: OpenEnv ``EnvClient`` (async; ``.sync()`` for blocking use)
=====================  ===========================================================================

Everything but ``limits``, ``fair_queue``, ``judge_queue`` and ``guard`` needs the ``serve`` extra:
``pip install 'hawkeye-env[serve]'``.
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
