"""The served env's FastAPI app: OpenEnv's ``HTTPEnvServer`` routes plus the judge's status.

Routes (OpenEnv's unless marked): ``GET /health``, ``GET /metadata``, ``GET /schema``,
``POST /reset``, ``POST /step`` (stateless: one fresh episode per request), ``GET /state``,
``WS /ws`` (one session, one episode after another, for ``HawkeyeEnvClient``), and ``GET /judge``
(hawkeye's): the shared ``JudgeQueue``'s device, store and counts, and the server's sessions.
Run it with ``hawkeye serve`` or::

    from hawkeye_env.server.app import make_app
    app = make_app(Evaluator(ResultStore("verdicts.sqlite")), device="cuda", max_sessions=64)
    uvicorn.run(app, host="127.0.0.1", port=8000)
"""

from __future__ import annotations

import functools

from hawkeye_env.judge.parent.evaluator import Evaluator
from hawkeye_env.server import require_openenv
from hawkeye_env.server.judge_queue import JudgeQueue

require_openenv()

from fastapi import FastAPI, Request  # noqa: E402
from fastapi.responses import JSONResponse  # noqa: E402
from openenv.core.env_server.http_server import HTTPEnvServer  # noqa: E402
from openenv.core.env_server.types import ConcurrencyConfig  # noqa: E402

from hawkeye_env.server.environment import BadRequest, HawkeyeEnvironment  # noqa: E402
from hawkeye_env.server.models import KernelAction, KernelObservation  # noqa: E402

#: Default cap on concurrent WebSocket sessions; each holds one ``KernelOptEnv`` (a few MB of
#: prompt text) and no process, so the judge's workers, not the sessions, bound the load.
DEFAULT_MAX_SESSIONS = 64


def make_app(evaluator: Evaluator, device: str = "auto", workers: int | None = None,
             gpus: int | list[int] | None = None, max_sessions: int = DEFAULT_MAX_SESSIONS,
             session_timeout_s: float | None = None, **env_kwargs) -> FastAPI:
    """The app serving ``KernelOptEnv(**env_kwargs)`` sessions judged by ``evaluator``.

    ``workers``/``gpus`` bound each judge batch (``evaluate_many``); ``session_timeout_s`` closes
    sessions idle that long (None: never). ``app.state.judge`` is the shared ``JudgeQueue``, closed
    when the app shuts down.
    """
    queue = JudgeQueue(evaluator, device, workers, gpus)
    factory = functools.partial(HawkeyeEnvironment, queue, **env_kwargs)
    factory().close()  # a bad env argument (unknown task, context) fails here, not in the first session
    server = HTTPEnvServer(factory, KernelAction, KernelObservation,
                           concurrency_config=ConcurrencyConfig(max_concurrent_envs=max_sessions,
                                                                session_timeout=session_timeout_s))
    app = FastAPI(title="hawkeye-env: hawkeye/KernelOpt-v3 over OpenEnv", version="1")
    server.register_routes(app)
    app.state.judge, app.state.env_server = queue, server

    @app.exception_handler(BadRequest)
    async def bad_request(request: Request, exc: BadRequest) -> JSONResponse:
        return JSONResponse(status_code=400, content={"detail": str(exc)})

    @app.get("/judge", tags=["Health"], summary="The shared judge's status and the server's sessions")
    async def judge_status() -> dict:
        capacity = server.get_capacity_status()
        return {**queue.status(), "sessions": {"active": capacity.active_sessions, "max": capacity.max_sessions}}

    app.router.on_shutdown.append(queue.close)
    return app


def serve(evaluator: Evaluator, host: str = "127.0.0.1", port: int = 8000, **app_kwargs) -> None:
    """Serve ``make_app(evaluator, **app_kwargs)`` with uvicorn until interrupted."""
    import uvicorn

    uvicorn.run(make_app(evaluator, **app_kwargs), host=host, port=port, log_level="info")


__all__ = ["DEFAULT_MAX_SESSIONS", "make_app", "serve"]
