"""A served env on loopback (uvicorn in a thread, a port the OS picks), shared by the server tests."""

from __future__ import annotations

import socket
import threading
import time

import pytest

pytest.importorskip("openenv.core", reason="the serve extra is not installed: pip install 'hawkeye-env[serve]'")

TASKS = ["vector_add_fp32", "softmax_fp32"]


@pytest.fixture(scope="package")
def server(tmp_path_factory):
    import uvicorn

    from hawkeye_env.judge.parent.evaluator import Evaluator
    from hawkeye_env.judge.parent.store import ResultStore
    from hawkeye_env.server.app import make_app

    evaluator = Evaluator(ResultStore(tmp_path_factory.mktemp("serve") / "verdicts.sqlite3"))
    app = make_app(evaluator, device="cpu", tasks=TASKS, context="none", max_turns=3, target_speedup=None,
                   max_sessions=16)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    uv = uvicorn.Server(uvicorn.Config(app, log_level="warning", ws_max_size=64 * 2**20))
    thread = threading.Thread(target=uv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not uv.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.05)
    yield {"url": f"http://127.0.0.1:{port}", "app": app}
    uv.should_exit = True
    thread.join(30)
    evaluator.store.close()
