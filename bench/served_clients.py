"""The clients of ``bench.served_load``: a well-behaved session and four hostile kinds.

Every client is a function ``(url, plan, tally, index, deadline)`` run in its own thread; it stops
at ``deadline`` (``time.monotonic()``) or after ``plan.max_requests`` requests, and records what
it saw in ``tally`` (``served_load.Tally``) under its lock. The hostile clients record, per kind,
a count per outcome (an HTTP status, a WebSocket close code, ``accepted``, ``error:<type>``).
"""

from __future__ import annotations

import contextlib
import json
import time

import httpx
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from bench.scripted_judge import TASK, scripted_reply
from hawkeye_env.edits import to_candidate
from hawkeye_env.judge.parent.store import source_hash

#: Seconds between a well-behaved session's tries while the server is full.
CONNECT_RETRY_S = 0.2


def expect(tally, reply: str, stage: str) -> str:
    """Record the stage ``reply``'s candidate must get; returns the candidate's source hash."""
    h = source_hash(to_candidate(None, reply))
    with tally.lock:
        tally.expected[h] = stage
    return h


def count(tally, kind: str, outcome: str) -> None:
    with tally.lock:
        tally.hostile[kind][outcome] = tally.hostile[kind].get(outcome, 0) + 1


def honest_session(url: str, plan, tally, i: int, deadline: float) -> None:
    """Connect (retrying while the server is full), reset, then ``plan.steps`` fast steps."""
    from hawkeye_env.server.client import HawkeyeEnvClient
    from hawkeye_env.server.models import KernelAction

    start = time.monotonic()
    while True:
        env = HawkeyeEnvClient(base_url=url).sync()
        try:
            env.connect()
            env.reset(task=TASK)
            break
        except (RuntimeError, ConnectionError, OSError, ConnectionClosed) as exc:  # full: the server refused
            env.close()
            if time.monotonic() > deadline:
                with tally.lock:
                    tally.lost += [f"w{i}: no session ({exc})"]
                return
            time.sleep(CONNECT_RETRY_S)
    with tally.lock:
        tally.session_wait_s.append(time.monotonic() - start)
    try:
        for j in range(plan.steps):
            stage = "correct" if j % 2 == 0 else "incorrect"
            reply = scripted_reply(plan.fast_s, stage, f"w{i}-{j}")
            h = expect(tally, reply, stage)
            t0 = time.monotonic()
            try:
                verdict = env.step(KernelAction(reply=reply)).observation.verdict
            except Exception as exc:  # noqa: BLE001 - a lost verdict is what the test counts
                with tally.lock:
                    tally.lost.append(f"w{i}-{j}: {type(exc).__name__}: {exc}")
                continue
            with tally.lock:
                tally.steps += 1
                tally.latency_s.append(time.monotonic() - t0)
                if verdict["source_hash"] != h or verdict["stage"] != stage:
                    tally.mismatched.append(f"w{i}-{j}")
    finally:
        env.close()


def huge_body(url: str, plan, tally, k: int, deadline: float) -> None:
    """A ``plan.huge_mib`` MiB ``/step`` body: with Content-Length, chunked, and as a WebSocket message."""
    filler = b"a" * (plan.huge_mib * 2**20)
    body = b'{"action": {"task": "' + TASK.encode() + b'", "reply": "' + filler + b'"}}'

    def chunks():
        for i in range(0, len(body), 2**20):
            yield body[i:i + 2**20]

    for n in range(plan.max_requests):
        if time.monotonic() > deadline:
            return
        how = ("length", "chunked", "ws")[n % 3]
        try:
            if how == "ws":
                with connect(url.replace("http", "ws") + "/ws", max_size=None) as ws:
                    ws.send(body.decode())
                    ws.recv(timeout=30)
                outcome = "ws:answered"
            else:
                content = body if how == "length" else chunks()
                outcome = f"{how}:{httpx.post(url + '/step', content=content, timeout=60).status_code}"
        except ConnectionClosed as exc:
            outcome = f"ws:closed_{exc.rcvd.code if exc.rcvd else 'no_frame'}"
        except (httpx.HTTPError, OSError, TimeoutError) as exc:
            outcome = f"{how}:error:{type(exc).__name__}"
        count(tally, "huge_body", outcome)


def slow_replies(plan, tally, tag: str, stage: str, deadline: float):
    """A hostile client's slow candidates, each recorded with its stage, until ``deadline`` or
    ``plan.max_requests``."""
    for n in range(plan.max_requests):
        if time.monotonic() > deadline:
            return
        reply = scripted_reply(plan.slow_s, stage, f"{tag}-{n}")
        expect(tally, reply, stage)
        yield reply


def abandon(url: str, plan, tally, k: int, deadline: float) -> None:
    """Stateless ``/step`` of a slow candidate, given up after 0.1 s, again and again."""
    for reply in slow_replies(plan, tally, f"a{k}", "correct", deadline):
        try:
            r = httpx.post(url + "/step", json={"action": {"task": TASK, "reply": reply}, "timeout_s": 0.1}, timeout=30)
            outcome = str(r.status_code)
        except httpx.HTTPError as exc:
            outcome = f"error:{type(exc).__name__}"
        count(tally, "abandon", outcome)
        time.sleep(0.05)


def disconnect(url: str, plan, tally, k: int, deadline: float) -> None:
    """A session that steps a slow candidate and hangs up at once, then comes back."""
    for reply in slow_replies(plan, tally, f"d{k}", "incorrect", deadline):
        try:
            with connect(url.replace("http", "ws") + "/ws") as ws:
                ws.send(json.dumps({"type": "reset", "data": {"task": TASK}}))
                kind = json.loads(ws.recv(timeout=30))["type"]
                if kind == "observation":
                    ws.send(json.dumps({"type": "step", "data": {"reply": reply}}))
                    time.sleep(0.05)
            outcome = "hung_up" if kind == "observation" else "refused"
        except (ConnectionClosed, OSError, TimeoutError) as exc:
            outcome = f"error:{type(exc).__name__}"
        count(tally, "disconnect", outcome)
        time.sleep(0.2)


def hoard(url: str, plan, tally, k: int, deadline: float) -> None:
    """Open as many sessions as the server admits, send nothing, and see which the server closes."""
    with contextlib.ExitStack() as stack:
        held = []
        for _ in range(min(plan.max_sessions, plan.max_requests)):
            ws = stack.enter_context(connect(url.replace("http", "ws") + "/ws"))
            try:
                reply = json.loads(ws.recv(timeout=0.3))  # the server speaks first only to refuse
                count(tally, "hoard", "refused:" + str(reply.get("data", {}).get("code")))
            except TimeoutError:
                held.append(ws)
                count(tally, "hoard", "opened")
            except ConnectionClosed:
                count(tally, "hoard", "refused:closed")
        for ws in held:
            try:
                ws.recv(timeout=max(0.1, deadline - time.monotonic()))
                count(tally, "hoard", "sent_data")
            except ConnectionClosed as exc:
                count(tally, "hoard", f"closed_{exc.rcvd.code if exc.rcvd else 'no_frame'}")
            except TimeoutError:
                count(tally, "hoard", "still_open")


HOSTILE = {"hoard": hoard, "huge_body": huge_body, "abandon": abandon, "disconnect": disconnect}

__all__ = ["CONNECT_RETRY_S", "HOSTILE", "abandon", "disconnect", "hoard", "honest_session", "huge_body",
           "slow_replies"]
