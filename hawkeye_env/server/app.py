"""The served env's ASGI app: OpenEnv's ``HTTPEnvServer`` routes, the judge's status, and ``ClientGuard``.

Routes (OpenEnv's unless marked): ``GET /health``, ``GET /metadata`` (name, the package's version),
``GET /schema``, ``POST /reset``, ``POST /step`` (stateless: one fresh episode per request),
``GET /state``, ``POST /mcp``, ``WS /ws`` (one session, one episode after another, for
``HawkeyeEnvClient``), and ``GET /judge`` (hawkeye's): the shared ``JudgeQueue``'s device, store,
counts and limits, and the server's sessions. What one client may do is bounded: request bodies and
WebSocket messages (``MAX_BODY_BYTES``), replies (``edits.MAX_REPLY_CHARS``), idle sessions
(``DEFAULT_SESSION_TIMEOUT_S``), candidates waiting or judged per client (``max_per_client``);
sessions are served round-robin by the queue (``guard.py``, ``judge_queue.py``).

Three ways to run it::

    hawkeye serve --port 8000 --device cuda                          # the CLI
    hawkeye serve --split train                                      # sessions reset on the train split only
    HAWKEYE_JUDGE_DEVICE=cpu uvicorn hawkeye_env.server.app:app      # any ASGI server, set by SETTINGS
    python -m hawkeye_env.server.app --port 8000                     # OpenEnv's ``main`` convention

or build one yourself::

    app = make_app(Evaluator(ResultStore("verdicts.sqlite")), device="cuda", max_sessions=64)
"""

from __future__ import annotations

import functools
import os

from hawkeye_env.judge.parent.eval_config import EvalConfig
from hawkeye_env.judge.parent.evaluator import Evaluator
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.server import require_openenv
from hawkeye_env.server.guard import ClientGuard
from hawkeye_env.server.judge_queue import JudgeQueue
from hawkeye_env.server.limits import DEFAULT_MAX_PER_CLIENT, DEFAULT_SESSION_TIMEOUT_S, MAX_BODY_BYTES
from hawkeye_env.tasks.selection import select_tasks

require_openenv()

from fastapi import FastAPI, Request  # noqa: E402
from fastapi.responses import JSONResponse  # noqa: E402
from openenv.core.env_server.http_server import HTTPEnvServer  # noqa: E402
from openenv.core.env_server.types import ConcurrencyConfig  # noqa: E402

from hawkeye_env.edits import MAX_REPLY_CHARS  # noqa: E402
from hawkeye_env.server.environment import BadRequest, Busy, HawkeyeEnvironment, Withdrawn  # noqa: E402
from hawkeye_env.server.models import KernelAction, KernelObservation  # noqa: E402

#: Default cap on concurrent WebSocket sessions; each holds one ``KernelOptEnv`` (a few MB of
#: prompt text) and no process, so the judge's workers, not the sessions, bound the load.
DEFAULT_MAX_SESSIONS = 64
#: The OpenEnv HTTP API this app serves (OpenEnv's own ``create_fastapi_app`` declares 1.0.0);
#: ``openenv validate`` reads it from ``/openapi.json``. The env's version is ``/metadata``'s.
OPENENV_HTTP_API_VERSION = "1.0.0"
STATUS_OF = {BadRequest: 400, Busy: 429, Withdrawn: 504}
#: ``uvicorn hawkeye_env.server.app:app`` reads these (unset: the default shown). Store and device
#: are the adapters' variables too.
SETTINGS = {
    "HAWKEYE_STORE": "results store path (the evaluator's default store)",
    "HAWKEYE_JUDGE_DEVICE": "cpu, cuda or auto (auto)",
    "HAWKEYE_JUDGE_TIMEOUT": "hard limit per candidate worker, seconds (300)",
    "HAWKEYE_SERVE_TASKS": "comma-separated task ids or splits (split:train) sessions may reset on (all)",
    "HAWKEYE_SERVE_CONTEXT": "unit context in the prompt: none, docs, units or full (docs)",
    "HAWKEYE_SERVE_MAX_TURNS": "steps per episode (4)",
    "HAWKEYE_SERVE_TARGET_SPEEDUP": "speedup that ends an episode; 0: the first correct kernel (1.0)",
    "HAWKEYE_SERVE_MAX_SESSIONS": f"concurrent WebSocket sessions ({DEFAULT_MAX_SESSIONS})",
    "HAWKEYE_SERVE_SESSION_TIMEOUT": f"close sessions idle this long, s; 0: never ({DEFAULT_SESSION_TIMEOUT_S:g})",
    "HAWKEYE_SERVE_WORKERS": "candidates judged at once (2 on CPU, 4 per GPU)",
    "HAWKEYE_SERVE_MAX_PER_CLIENT": f"candidates one client may have waiting or judged ({DEFAULT_MAX_PER_CLIENT})",
}


def make_app(evaluator: Evaluator, device: str = "auto", workers: int | None = None,
             gpus: int | list[int] | None = None, max_sessions: int = DEFAULT_MAX_SESSIONS,
             session_timeout_s: float | None = DEFAULT_SESSION_TIMEOUT_S,
             max_per_client: int | None = DEFAULT_MAX_PER_CLIENT, max_body_bytes: int = MAX_BODY_BYTES,
             **env_kwargs) -> FastAPI:
    """The FastAPI app serving ``KernelOptEnv(**env_kwargs)`` sessions judged by ``evaluator``.

    ``workers``/``gpus``/``max_per_client`` configure the ``JudgeQueue``; ``session_timeout_s``
    closes WebSocket sessions idle that long (None: never); ``max_body_bytes`` bounds a request
    body and a WebSocket message (``ClientGuard``). ``app.state.judge`` is the shared
    ``JudgeQueue``, closed when the app shuts down. ``env_kwargs["tasks"]`` is a selection as the env
    takes it (ids, ``split:NAME``; ``tasks/selection.py``), resolved to ids once for every session.
    """
    env_kwargs["tasks"] = select_tasks(env_kwargs.get("tasks"))  # once, not per session: ids or split:NAME
    queue = JudgeQueue(evaluator, device, workers, gpus, max_per_client=max_per_client)
    factory = functools.partial(HawkeyeEnvironment, queue, **env_kwargs)
    factory().close()  # a bad env argument (unknown task, context) fails here, not in the first session
    server = HTTPEnvServer(factory, KernelAction, KernelObservation,
                           concurrency_config=ConcurrencyConfig(max_concurrent_envs=max_sessions))
    app = FastAPI(title="hawkeye-env: hawkeye/KernelOpt over OpenEnv", version=OPENENV_HTTP_API_VERSION)
    server.register_routes(app)
    app.state.judge, app.state.env_server = queue, server
    limits = {"max_body_bytes": max_body_bytes, "max_reply_chars": MAX_REPLY_CHARS,
              "session_timeout_s": session_timeout_s, "max_per_client": max_per_client, "max_sessions": max_sessions}

    for exc_type, code in STATUS_OF.items():
        app.add_exception_handler(exc_type, functools.partial(_error, code))

    @app.get("/judge", tags=["Health"], summary="The shared judge's status, the limits and the server's sessions")
    async def judge_status() -> dict:
        capacity = server.get_capacity_status()
        return {**queue.status(), "limits": limits,
                "sessions": {"active": capacity.active_sessions, "max": capacity.max_sessions}}

    app.router.on_shutdown.append(queue.close)
    app.add_middleware(ClientGuard, max_body_bytes=max_body_bytes, idle_timeout_s=session_timeout_s)
    return app


async def _error(code: int, request: Request, exc: Exception) -> JSONResponse:
    return JSONResponse(status_code=code, content={"detail": str(exc)})


def app_from_env(environ: dict | None = None):
    """``make_app`` configured by the ``SETTINGS`` environment variables (``uvicorn ...app:app``)."""
    env = os.environ if environ is None else environ

    def number(name: str, kind=int):
        return kind(env[name]) if env.get(name) else None

    tasks = [t for t in env.get("HAWKEYE_SERVE_TASKS", "").split(",") if t] or None
    try:
        tasks = select_tasks(tasks) if tasks else None
    except (KeyError, ValueError) as exc:
        raise ValueError(f"HAWKEYE_SERVE_TASKS={env['HAWKEYE_SERVE_TASKS']!r}: {exc.args[0]}") from None
    timeout = number("HAWKEYE_JUDGE_TIMEOUT", float)
    idle = number("HAWKEYE_SERVE_SESSION_TIMEOUT", float)
    target = number("HAWKEYE_SERVE_TARGET_SPEEDUP", float)
    evaluator = Evaluator(ResultStore(env.get("HAWKEYE_STORE") or None),
                          EvalConfig(timeout_s=timeout) if timeout else EvalConfig())
    return make_app(
        evaluator, device=env.get("HAWKEYE_JUDGE_DEVICE", "auto"), workers=number("HAWKEYE_SERVE_WORKERS"),
        max_sessions=number("HAWKEYE_SERVE_MAX_SESSIONS") or DEFAULT_MAX_SESSIONS,
        session_timeout_s=DEFAULT_SESSION_TIMEOUT_S if idle is None else (idle or None),
        max_per_client=number("HAWKEYE_SERVE_MAX_PER_CLIENT") or DEFAULT_MAX_PER_CLIENT,
        tasks=tasks, context=env.get("HAWKEYE_SERVE_CONTEXT", "docs"),
        max_turns=number("HAWKEYE_SERVE_MAX_TURNS") or 4, target_speedup=1.0 if target is None else (target or None))


def serve(evaluator: Evaluator, host: str = "127.0.0.1", port: int = 8000, **app_kwargs) -> None:
    """Serve ``make_app(evaluator, **app_kwargs)`` with uvicorn until interrupted."""
    run(make_app(evaluator, **app_kwargs), host, port)


def run(app, host: str, port: int) -> None:
    """uvicorn on ``app``, its WebSocket frames bounded like the guard's messages."""
    import uvicorn

    uvicorn.run(app, host=host, port=port, log_level="info", ws_max_size=MAX_BODY_BYTES)


def main(host: str = "0.0.0.0", port: int = 8000) -> None:
    """OpenEnv's entry-point convention: serve ``app_from_env()`` (``python -m hawkeye_env.server.app``)."""
    run(app_from_env(), host, port)


@functools.cache
def _app_from_env():
    return app_from_env()


def __getattr__(name: str):
    """``app`` is built from the environment on first access, so importing this module builds nothing."""
    if name == "app":
        return _app_from_env()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["DEFAULT_MAX_SESSIONS", "OPENENV_HTTP_API_VERSION", "SETTINGS", "app_from_env", "main", "make_app",
           "serve"]

if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Serve hawkeye/KernelOpt over OpenEnv; settings: "
                                     + ", ".join(SETTINGS))
    parser.add_argument("--host", default="0.0.0.0")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    main(args.host, args.port)
