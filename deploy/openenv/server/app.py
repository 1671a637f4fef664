"""OpenEnv's entry points for hawkeye-env, all of them the repository's app (``hawkeye_env.server.app``).

``uv run server`` (``[project.scripts]``), ``python -m server.app`` and ``uvicorn server.app:app``
serve ``hawkeye_env.server.app.app_from_env()``, configured by its ``SETTINGS`` environment
variables (``HAWKEYE_JUDGE_DEVICE``, ``HAWKEYE_STORE``, ``HAWKEYE_SERVE_TASKS``, ...).
"""

from __future__ import annotations

from hawkeye_env.server import app as project_app


def main(host: str = "0.0.0.0", port: int = 8000) -> None:
    """Serve the repository's app, built from the environment, with uvicorn until interrupted."""
    project_app.main(host, port)


def __getattr__(name: str):
    """``app`` is the repository's ``hawkeye_env.server.app:app``, built on first access."""
    if name == "app":
        return project_app.app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":
    main()
