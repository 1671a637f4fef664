"""The OpenAI-compatible client (the ``openai`` SDK) against a loopback chat-completions server
started in the test: parameters, the SDK's retries (a 500 then success, a 429 with Retry-After),
failures (persistent 5xx, 4xx, a server that is down), replies as they arrive, and the record."""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from policies.openai_compat import NO_KEY, OpenAICompatPolicy, public_url

OBS = {"task_id": "vector_add_fp32", "prompt": "write a kernel", "source": "", "feedback": "", "turn": 0}


class _Server:
    """A loopback chat-completions endpoint answering with scripted statuses (an int, or
    ``(status, headers)``), then 200; records every body, its headers and arrival time."""

    def __init__(self, statuses: list, choices_per_reply: int | None = None, messages: list[dict] | None = None):
        self.statuses = list(statuses)
        self.messages = messages  # scripted reply messages, one per choice
        self.choices_per_reply = choices_per_reply
        self.bodies: list[dict] = []
        self.headers: list[dict] = []
        self.times: list[float] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.bodies.append(body)
                server.headers.append(dict(self.headers))
                server.times.append(time.monotonic())
                status = server.statuses.pop(0) if server.statuses else 200
                status, extra = status if isinstance(status, tuple) else (status, {})
                if status != 200 or self.path != "/v1/chat/completions":
                    self._send(status if status != 200 else 404, b'{"error": "scripted failure"}', extra)
                    return
                count = server.choices_per_reply or body["n"]
                reply = {"id": "c", "object": "chat.completion", "created": 0, "model": body["model"],
                         "choices": [{"index": i, "finish_reason": "length" if i else "stop",
                                      "message": server.messages[i] if server.messages else
                                      {"role": "assistant", "content": f"reply {len(server.bodies)}.{i}"}}
                                     for i in range(min(count, body["n"]))],
                         "usage": {"prompt_tokens": 7, "completion_tokens": 5, "total_tokens": 12}}
                self._send(200, json.dumps(reply).encode(), {})

            def _send(self, status: int, data: bytes, headers: dict):
                self.send_response(status)
                for name, value in {"Content-Type": "application/json", **headers}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def down_url() -> str:
    """The URL of a loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _policy(url: str, **kw) -> OpenAICompatPolicy:
    kw = {"seed": 11, "max_tokens": 321, "api_key": "sk-test", "max_retries": 1, **kw}
    return OpenAICompatPolicy(url, "test-model", **kw)


def test_sends_n_seed_max_tokens_and_returns_n_replies(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with _Server([200]) as server:
        [replies] = _policy(server.url, api_key=None).sample([OBS], n=3)
    assert replies == ["reply 1.0", "reply 1.1", "reply 1.2"]
    body = server.bodies[0]
    assert (body["n"], body["seed"], body["max_tokens"], body["model"]) == (3, 11, 321, "test-model")
    assert (body["temperature"], body["top_p"]) == (0.8, 0.95) and "tools" not in body
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["messages"][1]["content"] == "write a kernel"
    assert server.headers[0]["Authorization"] == f"Bearer {NO_KEY}"  # no key set: the placeholder


def test_a_500_is_retried_by_the_sdk_then_succeeds():
    with _Server([500, 200]) as server:
        policy = _policy(server.url)
        [replies] = policy.sample([OBS], n=2)
    assert len(server.bodies) == 2 and server.bodies[0] == server.bodies[1]
    assert [h.get("x-stainless-retry-count") for h in server.headers] == ["0", "1"]
    assert replies == ["reply 2.0", "reply 2.1"] and policy.errors == []


def test_a_429_waits_the_servers_retry_after():
    """Retry-After: 1 is honoured over the SDK's first backoff (0.5 s at most)."""
    with _Server([(429, {"Retry-After": "1"}), 200]) as server:
        policy = _policy(server.url)
        [replies] = policy.sample([OBS], n=1)
    assert replies == ["reply 2.0"] and policy.errors == []
    assert server.times[1] - server.times[0] >= 0.95


def test_a_retry_after_past_the_sdks_limit_fails_at_once_instead_of_stalling():
    with _Server([(429, {"Retry-After": "3600"})] * 3) as server:
        policy = _policy(server.url, max_retries=2)
        start = time.monotonic()
        assert policy.sample([OBS], n=1) == [[""]]
    assert time.monotonic() - start < 5 and len(server.bodies) == 1
    assert policy.errors[0]["error"].startswith("HTTP 429")


def test_persistent_failure_gives_empty_replies_and_a_logged_reason(caplog):
    with _Server([503] * 10) as server:
        policy = _policy(server.url, max_retries=1)
        [replies] = policy.sample([OBS], n=2)
    assert replies == ["", ""]
    assert len(server.bodies) == 2 and policy.errors[0]["error"].startswith("HTTP 503")
    assert policy.errors[0]["missing"] == 2 and policy.errors[0]["task_id"] == "vector_add_fp32"
    assert "request failed" in caplog.text


def test_a_400_is_not_retried():
    with _Server([400]) as server:
        policy = _policy(server.url)
        assert policy.sample([OBS], n=1) == [[""]]
    assert len(server.bodies) == 1 and "HTTP 400" in policy.errors[0]["error"]


def test_a_server_that_is_down_is_an_error_record_per_observation_never_a_raise():
    policy = _policy(down_url(), max_retries=1, timeout_s=5)
    assert policy.sample([OBS, {**OBS, "trajectory": 1}], n=2) == [["", ""], ["", ""]]
    assert sorted(e["trajectory"] for e in policy.errors) == [0, 1]
    assert all(e["error"].startswith("APIConnectionError") and e["missing"] == 2 for e in policy.errors)
    assert policy.raw == []


def test_server_ignoring_n_is_asked_for_the_rest():
    with _Server([], choices_per_reply=1) as server:
        [replies] = _policy(server.url).sample([OBS], n=3)
    assert len(replies) == 3 and [b["n"] for b in server.bodies] == [3, 2, 1]
    assert [b["seed"] for b in server.bodies] == [11, 12, 13]


def test_api_key_from_environment(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    with _Server([200]) as server:
        OpenAICompatPolicy(server.url, "m").sample([OBS], n=1)
    assert server.headers[0]["Authorization"] == "Bearer sk-env"


@pytest.mark.parametrize("turn,trajectory,expected", [(0, 0, 11), (0, 2, 11 + 2 * 7919), (1, 0, 11 + 104729)])
def test_seed_varies_with_trajectory_and_turn(turn, trajectory, expected):
    with _Server([200]) as server:
        _policy(server.url).sample([{**OBS, "turn": turn, "trajectory": trajectory}], n=1)
    assert server.bodies[0]["seed"] == expected


def test_max_completion_tokens_for_reasoning_models():
    with _Server([200]) as server:
        _policy(server.url, token_param="max_completion_tokens").sample([OBS], n=1)
    assert server.bodies[0]["max_completion_tokens"] == 321 and "max_tokens" not in server.bodies[0]
    with pytest.raises(ValueError, match="token_param"):
        _policy(down_url(), token_param="tokens")


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


def test_on_reply_gets_each_observations_obtained_replies_as_they_arrive():
    """The first choice arrives, the request for the rest fails: ``on_reply`` gets that one reply
    (from the request's thread), the error record counts the other."""
    got = []
    with _Server([200, 503, 503], choices_per_reply=1) as server:
        policy = _policy(server.url)
        policy.on_reply = lambda obs, texts: got.append((obs["trajectory"], texts, threading.current_thread().name))
        assert policy.sample([{**OBS, "trajectory": 3}], n=2) == [["reply 1.0", ""]]
    assert [(t, texts) for t, texts, _ in got] == [(3, ["reply 1.0"])]
    assert got[0][2] != threading.main_thread().name
    assert policy.errors[0]["missing"] == 1


def test_describe_records_the_sampling_parameters_and_no_secret():
    with _Server([]) as server:
        policy = _policy(server.url.replace("http://", "http://user:secret@") + "?api-key=secret", temperature=0.3)
    record = policy.describe()
    assert record["model"] == "test-model" and record["temperature"] == 0.3 and record["max_tokens"] == 321
    assert record["seed"] == 11 and record["base_url"] == server.url and "max_retries" not in record
    assert "secret" not in json.dumps(record) and "sk-test" not in json.dumps(record)
    assert public_url("http://[::1]:8000/v1") == "http://[::1]:8000/v1"


def test_without_the_sdk_the_policy_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(ImportError, match=r"pip install 'hawkeye-env\[openai\]'"):
        OpenAICompatPolicy("http://127.0.0.1:1/v1", "m")


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
