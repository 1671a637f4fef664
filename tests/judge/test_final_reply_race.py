"""A worker's final reply that lands between the parent's wait and its liveness check is read,
not taken for a crash (``sandbox._poll``)."""

from __future__ import annotations

import socket
from multiprocessing.connection import Connection

from hawkeye_env.judge.parent.launch import run_job
from hawkeye_env.judge.parent.launch.output_capture import MessageReader


class _Worker:
    """A worker process stand-in: alive until ``exit`` is called, then exit code 0."""

    def __init__(self) -> None:
        self.exitcode: int | None = None

    def is_alive(self) -> bool:
        return self.exitcode is None

    def join(self, timeout: float | None = None) -> None:
        pass


class _LateReader(MessageReader):
    """Its first wait ends empty, and the worker sends its last message and exits just after,
    before the parent looks at the process: the order the race needs, made deterministic."""

    def __init__(self, fd: int, limit: int, worker_end: Connection, worker: _Worker) -> None:
        super().__init__(fd, limit)
        self.worker_end, self.worker, self.waits = worker_end, worker, 0

    def poll(self, timeout: float) -> bytes | None:
        payload = super().poll(timeout)
        self.waits += 1
        if self.waits == 1:
            self.worker_end.send_bytes(b"final reply")
            self.worker_end.close()
            self.worker.exitcode = 0
        return payload


def test_a_reply_sent_just_before_the_worker_exits_is_read() -> None:
    parent_sock, worker_sock = socket.socketpair()
    worker = _Worker()
    reader = _LateReader(parent_sock.fileno(), 1 << 20, Connection(worker_sock.detach()), worker)
    try:
        first = run_job._poll(reader, worker, 0.01)
        assert first == (None, None), first  # nothing yet, and the worker was alive when the wait began
        second = run_job._poll(reader, worker, 0.01)
        assert second == (b"final reply", None), second
        third = run_job._poll(reader, worker, 0.01)  # then the closed connection: gone, with its exit code
        assert third[0] is None and third[1] == ("crash", "worker exited with code 0 before replying"), third
    finally:
        parent_sock.close()


def test_a_dead_worker_with_nothing_sent_is_a_crash_at_once() -> None:
    parent_sock, worker_sock = socket.socketpair()
    worker = _Worker()
    worker.exitcode = -9
    try:  # its socket is still open (a descendant may hold it): no EOF, so the liveness read decides
        payload, gone = run_job._poll(MessageReader(parent_sock.fileno(), 1 << 20), worker, 0.01)
        assert payload is None and gone == ("crash", "worker was killed by SIGKILL")
    finally:
        parent_sock.close()
        worker_sock.close()
