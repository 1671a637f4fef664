"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for driving a framework's own
rollout loop offline: each ``POST /v1/chat/completions`` answers the next reply of the script (an
empty reply once it runs out) and keeps the request body; ``GET /v1/models`` lists the one model.
It serves from a daemon thread and stops when its ``with`` block ends. Example::

    with ScriptedChatServer(["```python\\n...```"]) as server:
        ...  # a client with base_url=server.url
    server.bodies[0]["messages"]   # what the framework sent
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ScriptedChatServer:
    """Answers chat completions from ``replies`` in order; ``bodies`` holds every request body."""

    def __init__(self, replies: list[str], model: str = "scripted"):
        self.replies, self.model = list(replies), model
        self.bodies: list[dict] = []
        self._lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def _next(self, body: dict) -> dict:
        with self._lock:
            self.bodies.append(body)
            text = self.replies.pop(0) if self.replies else ""
            n = len(self.bodies)
        return {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": 0, "model": body.get("model"),
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _send(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                self._send(200, {"object": "list", "data": [{"id": server.model, "object": "model"}]})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                self._send(200, server._next(body))

            def log_message(self, *args):
                pass

        return Handler

    def __enter__(self) -> ScriptedChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
