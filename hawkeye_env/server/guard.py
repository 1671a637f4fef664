"""What the served env allows one client: request size, idle time, and what happens when it leaves.

``ClientGuard`` is a pure ASGI middleware around the OpenEnv app (``make_app`` installs it):

* HTTP: a body over ``max_body_bytes`` is answered 413 before the app sees it (at once when its
  ``Content-Length`` says so, else as soon as the bytes read pass the limit). The body is read
  here and handed to the app whole.
* WebSocket: a message over ``max_body_bytes`` closes the connection (code 1009); a session that
  sends nothing for ``idle_timeout_s`` while no reply of its own is pending is closed (code 1000,
  reason "idle"), which ends its OpenEnv session and frees its slot of ``max_sessions``.
* Both: ``current()`` is the request's ``Connection``: its client key (one per WebSocket
  connection, one per HTTP peer address: the judge queue's per-client bound and round-robin use
  it) and an event set when the client goes away (a step waiting for its verdict withdraws its
  candidate then). What the app sends after the client left is dropped instead of raising, so a
  client that disconnects mid-step costs one INFO line, not an ERROR with tracebacks.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import logging
from dataclasses import dataclass, field

log = logging.getLogger(__name__)

_CURRENT: contextvars.ContextVar[Connection | None] = contextvars.ContextVar("hawkeye_connection", default=None)
_IDS = itertools.count(1)
#: Messages read ahead of a busy WebSocket session (uvicorn's own ``ws_max_queue`` default is 32):
#: enough to see a disconnect behind a few pipelined messages, few enough to bound what one holds.
READ_AHEAD = 8


@dataclass(eq=False)
class Connection:
    """One HTTP request or WebSocket connection: ``key`` names its client, ``gone`` is set when it left."""

    key: str
    gone: asyncio.Event = field(default_factory=asyncio.Event)
    closed: bool = False  # nothing more may be sent to it


def current() -> Connection | None:
    """The ``Connection`` of the request being served (None outside ``ClientGuard``)."""
    return _CURRENT.get()


class ClientGuard:
    """ASGI middleware; see the module docstring.

    Args:
        app: the ASGI app to guard.
        max_body_bytes: largest HTTP body or WebSocket message accepted.
        idle_timeout_s: close a WebSocket that sent nothing this long with no reply pending (None: never).
    """

    def __init__(self, app, max_body_bytes: int, idle_timeout_s: float | None):
        self.app, self.max_body_bytes, self.idle_timeout_s = app, max_body_bytes, idle_timeout_s

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http":
            await self._http(scope, receive, send)
        elif scope["type"] == "websocket":
            await self._websocket(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _http(self, scope, receive, send) -> None:
        host = (scope.get("client") or ("unknown", 0))[0]
        conn = Connection(f"http:{host}")
        length = dict(scope.get("headers") or []).get(b"content-length", b"0")
        if not length.isdigit() or int(length) > self.max_body_bytes:
            return await _reply_413(send, self.max_body_bytes)
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            if len(body) > self.max_body_bytes:
                return await _reply_413(send, self.max_body_bytes)
            if not message.get("more_body"):
                break
        watch = asyncio.ensure_future(_watch(receive, conn))
        replayed = False

        async def app_receive():
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            await conn.gone.wait()
            return {"type": "http.disconnect"}

        token = _CURRENT.set(conn)
        try:
            await self.app(scope, app_receive, _guarded_send(send, conn))
        finally:
            _CURRENT.reset(token)
            watch.cancel()

    async def _websocket(self, scope, receive, send) -> None:
        host = (scope.get("client") or ("unknown", 0))[0]
        conn = Connection(f"ws:{host}:{next(_IDS)}")
        inbox: asyncio.Queue = asyncio.Queue(READ_AHEAD)
        reader = asyncio.ensure_future(self._read_ws(receive, send, conn, inbox))
        accepted = False
        guarded = _guarded_send(send, conn)

        async def app_send(message):
            nonlocal accepted
            accepted = accepted or message["type"] == "websocket.accept"
            await guarded(message)

        async def app_receive():
            if not accepted or self.idle_timeout_s is None or not inbox.empty():
                return await inbox.get()
            try:
                return await asyncio.wait_for(inbox.get(), self.idle_timeout_s)
            except asyncio.TimeoutError:
                log.info("closing %s: idle for %g s", conn.key, self.idle_timeout_s)
                await _close(send, conn, 1000, f"idle for {self.idle_timeout_s:g} s")
                return {"type": "websocket.disconnect", "code": 1000}

        token = _CURRENT.set(conn)
        try:
            await self.app(scope, app_receive, app_send)
        finally:
            _CURRENT.reset(token)
            reader.cancel()

    async def _read_ws(self, receive, send, conn: Connection, inbox: asyncio.Queue) -> None:
        """Forward the client's messages to ``inbox``, noting a disconnect the moment it comes."""
        while True:
            message = await receive()
            if message["type"] == "websocket.disconnect":
                conn.gone.set()
                conn.closed = True
            elif len(message.get("text") or message.get("bytes") or "") > self.max_body_bytes:
                log.info("closing %s: a message over %d bytes", conn.key, self.max_body_bytes)
                await _close(send, conn, 1009, f"message over {self.max_body_bytes} bytes")
                message = {"type": "websocket.disconnect", "code": 1009}
            await inbox.put(message)
            if message["type"] == "websocket.disconnect":
                return


async def _watch(receive, conn: Connection) -> None:
    """Set ``conn.gone`` when the HTTP client disconnects (or the server ends the exchange)."""
    while (await receive())["type"] != "http.disconnect":
        pass
    conn.closed = True
    conn.gone.set()


def _guarded_send(send, conn: Connection):
    async def guarded(message) -> None:
        if conn.closed:
            return
        try:
            await send(message)
        except OSError:  # the client left while we sent (uvicorn's ClientDisconnected is an OSError)
            conn.closed = True
            conn.gone.set()
    return guarded


async def _close(send, conn: Connection, code: int, reason: str) -> None:
    if not conn.closed:
        conn.closed = True
        try:
            await send({"type": "websocket.close", "code": code, "reason": reason})
        except OSError:
            pass
    conn.gone.set()


async def _reply_413(send, limit: int) -> None:
    body = f'{{"detail": "request body over the {limit} byte limit"}}'.encode()
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


__all__ = ["READ_AHEAD", "ClientGuard", "Connection", "current"]
