"""Served envs on loopback (uvicorn in a thread, a port the OS picks), shared by the server tests:
``server`` judges with the real evaluator on CPU; ``scripted_server`` is the same app on
``bench.scripted_judge``'s scripted verdicts, for tests of scheduling and limits, with the
server's log records above INFO kept in ``["errors"]``."""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time

import pytest

pytest.importorskip("openenv.core", reason="the serve extra is not installed: pip install 'hawkeye-env[serve]'")

TASKS = ["vector_add_fp32", "softmax_fp32"]


@contextlib.contextmanager
def serving(app, **config):
    """``app`` served by uvicorn in a daemon thread until the block ends; yields its base URL."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    uv = uvicorn.Server(uvicorn.Config(app, **{"log_level": "warning", "ws_max_size": 64 * 2**20, **config}))
    thread = threading.Thread(target=uv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not uv.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        uv.should_exit = True
        thread.join(30)


@pytest.fixture(scope="package")
def server(tmp_path_factory):
    from hawkeye_env.judge.parent.evaluator import Evaluator
    from hawkeye_env.judge.parent.store import ResultStore
    from hawkeye_env.server.app import make_app

    evaluator = Evaluator(ResultStore(tmp_path_factory.mktemp("serve") / "verdicts.sqlite3"))
    app = make_app(evaluator, device="cpu", tasks=TASKS, context="none", max_turns=3, target_speedup=None,
                   max_sessions=16)
    with serving(app) as url:
        yield {"url": url, "app": app}
    evaluator.store.close()


class _Keep(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if not any(r is record for r in self.records):  # reached through both loggers
            self.records.append(record)


@pytest.fixture
def scripted_server(tmp_path):
    """A factory: ``scripted_server(max_sessions=..., session_timeout_s=..., max_turns=...)`` starts the
    scripted app and returns ``{"url", "app", "store", "errors"}``; every server stops with the test."""
    from bench.scripted_judge import make_scripted_app

    stack = contextlib.ExitStack()
    keep = _Keep()
    for name in ("uvicorn", ""):  # uvicorn's own logging config stops its records at "uvicorn"
        logging.getLogger(name).addHandler(keep)
        stack.callback(logging.getLogger(name).removeHandler, keep)

    def start(max_sessions: int = 8, session_timeout_s: float | None = None, max_turns: int = 4, **config) -> dict:
        store = tmp_path / f"verdicts-{len(keep.records)}-{time.monotonic_ns()}.sqlite3"
        app = make_scripted_app(str(store), max_sessions, session_timeout_s, max_turns)
        url = stack.enter_context(serving(app, **{"log_config": None, **config}))
        return {"url": url, "app": app, "store": store, "errors": keep.records}

    with stack:
        yield start
