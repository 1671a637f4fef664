"""The OpenAI-compatible client against a local chat-completions server: parameters, retries, failures."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from policies.openai_compat import OpenAICompatPolicy

OBS = {"task_id": "vector_add_fp32", "prompt": "write a kernel", "source": "", "feedback": "", "turn": 0}


class _Server:
    """A chat-completions endpoint answering with scripted status codes, recording every body."""

    def __init__(self, statuses: list[int], choices_per_reply: int | None = None, messages: list[dict] | None = None):
        self.statuses = list(statuses)
        self.messages = messages  # scripted reply messages, one per choice
        self.choices_per_reply = choices_per_reply
        self.bodies: list[dict] = []
        self.headers: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.bodies.append(body)
                server.headers.append(dict(self.headers))
                status = server.statuses.pop(0) if server.statuses else 200
                status, extra = status if isinstance(status, tuple) else (status, {})
                if status != 200 or self.path != "/v1/chat/completions":
                    self.send_response(status if status != 200 else 404)
                    for name, value in extra.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(b'{"error": "scripted failure"}')
                    return
                count = server.choices_per_reply or body["n"]
                reply = {"choices": [{"index": i, "finish_reason": "length" if i else "stop",
                                      "message": server.messages[i] if server.messages else
                                      {"role": "assistant", "content": f"reply {len(server.bodies)}.{i}"}}
                                     for i in range(min(count, body["n"]))],
                         "usage": {"prompt_tokens": 7, "completion_tokens": 5, "total_tokens": 12}}
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def _policy(url: str, **kw) -> OpenAICompatPolicy:
    return OpenAICompatPolicy(url, "test-model", seed=11, max_tokens=321, backoff_s=0.01, api_key="", **kw)


def test_sends_n_seed_max_tokens_and_returns_n_replies():
    with _Server([200]) as server:
        [replies] = _policy(server.url).sample([OBS], n=3)
    assert replies == ["reply 1.0", "reply 1.1", "reply 1.2"]
    body = server.bodies[0]
    assert (body["n"], body["seed"], body["max_tokens"], body["model"]) == (3, 11, 321, "test-model")
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["messages"][1]["content"] == "write a kernel"
    assert "Authorization" not in server.headers[0]


def test_a_500_is_retried_then_succeeds():
    with _Server([500, 200]) as server:
        policy = _policy(server.url)
        [replies] = policy.sample([OBS], n=2)
    assert len(server.bodies) == 2 and server.bodies[0] == server.bodies[1]
    assert replies == ["reply 2.0", "reply 2.1"] and policy.errors == []


def test_persistent_failure_gives_empty_replies_and_a_logged_reason(caplog):
    with _Server([503] * 10) as server:
        policy = _policy(server.url, max_retries=2)
        [replies] = policy.sample([OBS], n=2)
    assert replies == ["", ""]
    assert len(server.bodies) == 3 and "HTTP 503" in policy.errors[0]["error"]
    assert policy.errors[0]["missing"] == 2 and policy.errors[0]["task_id"] == "vector_add_fp32"
    assert "request failed" in caplog.text


def test_a_400_is_not_retried():
    with _Server([400]) as server:
        policy = _policy(server.url)
        assert policy.sample([OBS], n=1) == [[""]]
    assert len(server.bodies) == 1 and "HTTP 400" in policy.errors[0]["error"]


def test_unreachable_server_never_raises():
    policy = _policy("http://127.0.0.1:9/v1", max_retries=1, timeout_s=2)
    assert policy.sample([OBS, OBS], n=2) == [["", ""], ["", ""]]
    assert len(policy.errors) == 2


def test_server_ignoring_n_is_asked_for_the_rest():
    with _Server([], choices_per_reply=1) as server:
        [replies] = _policy(server.url).sample([OBS], n=3)
    assert len(replies) == 3 and [b["n"] for b in server.bodies] == [3, 2, 1]
    assert [b["seed"] for b in server.bodies] == [11, 12, 13]


def test_api_key_from_environment(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with _Server([200]) as server:
        OpenAICompatPolicy(server.url, "m").sample([OBS], n=1)
    assert server.headers[0]["Authorization"] == "Bearer sk-test"


@pytest.mark.parametrize("turn,trajectory,expected", [(0, 0, 11), (0, 2, 11 + 2 * 7919), (1, 0, 11 + 104729)])
def test_seed_varies_with_trajectory_and_turn(turn, trajectory, expected):
    with _Server([200]) as server:
        _policy(server.url).sample([{**OBS, "turn": turn, "trajectory": trajectory}], n=1)
    assert server.bodies[0]["seed"] == expected


def test_retry_after_is_honoured_over_the_backoff():
    import time

    with _Server([(429, {"Retry-After": "0"}), 200]) as server:
        policy = OpenAICompatPolicy(server.url, "m", backoff_s=30.0, api_key="")
        start = time.monotonic()
        [replies] = policy.sample([OBS], n=1)
    assert replies == ["reply 2.0"] and time.monotonic() - start < 10


def test_retry_after_parses_seconds_and_dates():
    from email.utils import formatdate

    from policies.openai_compat import retry_after_s

    assert retry_after_s("3") == 3.0 and retry_after_s(None) is None and retry_after_s("soon") is None
    assert 50 < retry_after_s(formatdate(__import__("time").time() + 60, usegmt=True)) <= 60


def test_max_completion_tokens_for_reasoning_models():
    with _Server([200]) as server:
        _policy(server.url, token_param="max_completion_tokens").sample([OBS], n=1)
    assert server.bodies[0]["max_completion_tokens"] == 321 and "max_tokens" not in server.bodies[0]
    with pytest.raises(ValueError, match="token_param"):
        _policy("http://127.0.0.1:9/v1", token_param="tokens")


def test_usage_finish_reason_and_raw_replies_are_kept():
    with _Server([200]) as server:
        policy = _policy(server.url)
        policy.sample([{**OBS, "trajectory": 1}], n=2)
    assert [(r["sample"], r["text"], r["finish_reason"]) for r in policy.raw] == [(0, "reply 1.0", "stop"),
                                                                                 (1, "reply 1.1", "length")]
    assert policy.raw[0]["usage"]["completion_tokens"] == 5 and policy.raw[0]["trajectory"] == 1


def test_an_unknown_model_is_an_error_record_not_a_reply():
    with _Server([404]) as server:
        policy = _policy(server.url)
        assert policy.sample([OBS], n=3) == [["", "", ""]]
    assert policy.errors == [{"task_id": "vector_add_fp32", "trajectory": 0, "turn": 0, "missing": 3,
                              "error": 'HTTP 404: {"error": "scripted failure"}'}]
    assert policy.raw == []


def test_tool_calls_offer_submit_kernel_and_read_its_source():
    """With ``tool_calls`` the request offers the training tool; a call's ``source`` is the
    candidate, a text answer is its text, and arguments that are not JSON reach the judge as they are."""
    messages = [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c0", "type": "function", "function": {"name": "submit_kernel",
                                                          "arguments": json.dumps({"source": "```python\nA\n```"})}}]},
        {"role": "assistant", "content": "```python\nB\n```"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c2", "type": "function", "function": {"name": "submit_kernel", "arguments": "{not json"}}]},
    ]
    with _Server([200], messages=messages) as server:
        policy = _policy(server.url, tool_calls=True)
        [replies] = policy.sample([OBS], n=3)
    assert replies == ["```python\nA\n```", "```python\nB\n```", "{not json"]
    body = server.bodies[0]
    assert body["tools"][0]["function"]["name"] == "submit_kernel" and body["tool_choice"] == "auto"
    assert [r["tool_call"] for r in policy.raw] == [True, False, True]
    with _Server([200]) as server:
        _policy(server.url).sample([OBS], n=1)
    assert "tools" not in server.bodies[0]
