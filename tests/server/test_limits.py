"""What one client may do to the served env (on scripted verdicts): oversized requests refused,
idle sessions closed, a hung-up or timed-out step's candidate withdrawn without an error logged,
and a client at its bound answered 429."""

from __future__ import annotations

import contextlib
import json
import threading
import time

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from bench.scripted_judge import TASK, scripted_reply
from hawkeye_env.edits import MAX_REPLY_CHARS, to_candidate
from hawkeye_env.judge.parent.store import ResultStore, source_hash
from hawkeye_env.server.limits import MAX_BODY_BYTES


def ws(url: str):
    return connect(url.replace("http", "ws") + "/ws")


def step_message(reply: str) -> str:
    return json.dumps({"type": "step", "data": {"reply": reply}})


def reset(sock) -> dict:
    sock.send(json.dumps({"type": "reset", "data": {"task": TASK}}))
    return json.loads(sock.recv(timeout=10))


def was_stored(store, reply: str) -> bool:
    with ResultStore(store) as s:
        return s.get_verdict(TASK, source_hash(to_candidate(None, reply)), "cpu", {"judge": "scripted"}, {}) is not None


def test_oversized_requests_are_refused_before_the_env_sees_them(scripted_server):
    srv = scripted_server()
    url = srv["url"]
    body = b'{"action": {"task": "' + TASK.encode() + b'", "reply": "' + b"a" * MAX_BODY_BYTES + b'"}}'
    sized = httpx.post(url + "/step", content=body)
    assert sized.status_code == 413 and "byte limit" in sized.json()["detail"]
    chunked = httpx.post(url + "/step", content=(body[i:i + 2**20] for i in range(0, len(body), 2**20)))
    assert chunked.status_code == 413
    too_long = httpx.post(url + "/step", json={"action": {"task": TASK, "reply": "a" * (MAX_REPLY_CHARS + 1)}})
    assert too_long.status_code == 422 and too_long.json()["detail"][0]["type"] == "string_too_long"
    at_limit = httpx.post(url + "/step", json={"action": {"task": TASK, "reply": "a" * MAX_REPLY_CHARS}})
    assert at_limit.status_code == 200 and at_limit.json()["observation"]["verdict"]["stage"] == "no_source"
    source = httpx.post(url + "/reset", json={"task": TASK, "source": "#" * (MAX_REPLY_CHARS + 1)})
    assert source.status_code == 400 and "character limit" in source.json()["detail"]
    with ws(url) as sock, pytest.raises(ConnectionClosed) as closed:
        sock.send("x" * (MAX_BODY_BYTES + 1))
        sock.recv(timeout=10)
    assert closed.value.rcvd.code == 1009
    assert httpx.get(url + "/health").status_code == 200 and srv["errors"] == []


def test_an_idle_session_is_closed_and_its_slot_serves_another_but_a_pending_step_is_not_idle(scripted_server):
    srv = scripted_server(max_sessions=1, session_timeout_s=0.6)
    url = srv["url"]
    with ws(url) as hoarder:
        with ws(url) as refused:
            assert json.loads(refused.recv(timeout=10))["data"]["code"] == "CAPACITY_REACHED"
        start = time.monotonic()
        with pytest.raises(ConnectionClosed) as closed:
            hoarder.recv(timeout=10)
        assert closed.value.rcvd.code == 1000 and "idle" in closed.value.rcvd.reason
        assert 0.5 < time.monotonic() - start < 5
    with ws(url) as user:
        assert reset(user)["type"] == "observation"
        user.send(step_message(scripted_reply(1.2, "correct", "longer-than-idle")))
        answer = json.loads(user.recv(timeout=10))
        assert answer["type"] == "observation" and answer["data"]["observation"]["verdict"]["stage"] == "correct"
    assert srv["errors"] == []


def test_a_hung_up_step_is_withdrawn_if_waiting_and_stored_if_judged_with_no_error_logged(scripted_server):
    srv = scripted_server()
    url = srv["url"]
    running = [scripted_reply(0.8, "correct", f"running-{i}") for i in range(2)]
    waiting = scripted_reply(0.0, "incorrect", "waiting")
    with contextlib.ExitStack() as stack:
        socks = [stack.enter_context(ws(url)) for _ in range(3)]
        for sock in socks:
            assert reset(sock)["type"] == "observation"
        for sock, reply in zip(socks, running):  # two sessions fill the judge's two slots
            sock.send(step_message(reply))
        time.sleep(0.2)
        socks[2].send(step_message(waiting))
        time.sleep(0.2)
        socks[2].close()  # hangs up while its candidate waits
        time.sleep(0.2)
    time.sleep(1.2)  # the two others hung up while being judged: their verdicts come and are stored
    status = httpx.get(url + "/judge").json()
    assert status["cancelled"] == 1 and status["given_up"] == 2 and status["judged"] == 2 and status["in_flight"] == 0
    assert status["sessions"]["active"] == 0
    assert all(was_stored(srv["store"], r) for r in running) and not was_stored(srv["store"], waiting)
    assert srv["errors"] == []


def test_a_stateless_step_past_its_timeout_gets_504_and_a_client_at_its_bound_429(scripted_server):
    srv = scripted_server()
    url = srv["url"]

    def post(tag: str, timeout_s=None, seconds: float = 0.05) -> httpx.Response:
        body = {"action": {"task": TASK, "reply": scripted_reply(seconds, "correct", tag)}}
        return httpx.post(url + "/step", json={**body, **({"timeout_s": timeout_s} if timeout_s else {})}, timeout=30)

    abandoned = post("abandoned", timeout_s=0.1, seconds=2.0)  # judged on, held by this peer until its verdict
    assert abandoned.status_code == 504 and "still being judged" in abandoned.json()["detail"]
    patient = []
    thread = threading.Thread(target=lambda: patient.append(post("patient")))
    thread.start()
    deadline = time.monotonic() + 10
    while httpx.get(url + "/judge").json()["queued"] < 1:  # "patient" waits behind "abandoned", same peer
        assert time.monotonic() < deadline
        time.sleep(0.02)
    busy = post("one-too-many")
    assert busy.status_code == 429 and "limit is 2" in busy.json()["detail"]
    thread.join(10)
    assert patient[0].status_code == 200 and patient[0].json()["observation"]["verdict"]["stage"] == "correct"
    status = httpx.get(url + "/judge").json()
    assert status["refused"] == 1 and status["limits"]["max_per_client"] == 2 and srv["errors"] == []
