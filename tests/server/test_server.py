"""``hawkeye serve`` on loopback: health and judge status, a WebSocket episode through the OpenEnv
client, stateless HTTP steps, bad requests answered (never a crashed server), and N sessions
stepping at once with every verdict accounted for."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.vector_add_edits import BROKEN, FIX, SOLUTION, TASK, fenced


def client(server):
    from hawkeye_env.server.client import HawkeyeEnvClient

    return HawkeyeEnvClient(base_url=server["url"]).sync()


def test_health_metadata_and_judge_status(server):
    assert httpx.get(server["url"] + "/health").json()["status"] == "healthy"
    assert httpx.get(server["url"] + "/metadata").json()["name"] == "hawkeye/KernelOpt-v3"
    status = httpx.get(server["url"] + "/judge").json()
    assert status["device"] == "cpu" and status["store"].endswith("verdicts.sqlite3")
    assert status["sessions"]["max"] == 16 and status["closed"] is False and status["workers"] == 2
    assert status["limits"]["session_timeout_s"] == 600 and status["limits"]["max_per_client"] == 2
    schema = httpx.get(server["url"] + "/schema").json()
    assert "reply" in schema["action"]["properties"] and "verdict" in schema["observation"]["properties"]


def test_a_websocket_episode_is_the_envs_episode(server):
    from hawkeye_env.server.models import KernelAction

    with client(server) as env:
        first = env.reset(task=TASK)
        obs = first.observation
        assert obs.task_id == TASK and obs.turn == 0 and not first.done and obs.verdict is None
        assert [m["role"] for m in obs.messages] == ["system", "user"] and "## Reply format" in obs.prompt
        broken = env.step(KernelAction(reply=fenced(BROKEN)))
        assert broken.reward == -0.5 and not broken.done and broken.observation.verdict["stage"] == "incorrect"
        assert "a - b" in broken.observation.source and broken.observation.turn == 1
        fixed = env.step(KernelAction(reply=FIX))
        assert fixed.reward == pytest.approx(0.2) and fixed.done and fixed.observation.terminated
        assert fixed.observation.source == SOLUTION and env.state().step_count == 2
        with pytest.raises(RuntimeError, match="episode is over"):
            env.step(KernelAction(reply=FIX))
        again = env.reset(task="softmax_fp32")
        assert again.observation.task_id == "softmax_fp32" and again.observation.turn == 0


def test_bad_requests_get_clear_errors_and_the_session_survives(server):
    from hawkeye_env.server.models import KernelAction

    with client(server) as env:
        with pytest.raises(RuntimeError, match="no episode in this session"):
            env.step(KernelAction(reply="x"))
        with pytest.raises(RuntimeError, match="unknown task 'gemm_bf16' for this server"):
            env.reset(task="gemm_bf16")
        with pytest.raises(RuntimeError, match="unknown reset fields"):
            env.reset(task=TASK, tsak="x")
        with pytest.raises(RuntimeError, match="Invalid message|reply"):
            env.step({"not_a_field": 1})
        junk = env.reset(task=TASK) and env.step(KernelAction(reply="no code here"))
        assert junk.reward == -1.0 and junk.observation.verdict["stage"] == "no_source"


def test_raw_websocket_garbage_is_answered(server):
    from websockets.sync.client import connect

    with connect(server["url"].replace("http", "ws") + "/ws") as ws:
        ws.send("{not json")
        assert json.loads(ws.recv())["data"]["code"] == "INVALID_JSON"
        ws.send(json.dumps({"type": "launch_missiles"}))
        assert json.loads(ws.recv())["data"]["code"] == "UNKNOWN_TYPE"
        ws.send(json.dumps({"type": "reset", "data": {"task": TASK}}))
        assert json.loads(ws.recv())["type"] == "observation"
    assert httpx.get(server["url"] + "/health").status_code == 200


def test_stateless_http_step_judges_one_reply(server):
    url = server["url"]
    ok = httpx.post(url + "/step", json={"action": {"reply": fenced(SOLUTION), "task": TASK}}, timeout=120)
    assert ok.status_code == 200 and ok.json()["reward"] == pytest.approx(0.2)
    assert ok.json()["observation"]["verdict"]["stage"] == "correct"
    missing = httpx.post(url + "/step", json={"action": {"reply": "x"}})
    assert missing.status_code == 400 and "send reset first" in missing.json()["detail"]
    assert httpx.post(url + "/step", json={"action": {"text": "x"}}).status_code == 422
    assert httpx.post(url + "/reset", json={"task": "nope"}).status_code == 400


def test_sessions_stepping_at_once_share_the_judge_and_lose_no_verdict(server):
    """8 sessions at once (bounded: 2 steps each, 120 s): junk first (judged without a worker),
    then one of two distinct correct sources; every step gets its own verdict and the judge never
    runs more than its workers."""
    from hawkeye_env.server.models import KernelAction

    before = httpx.get(server["url"] + "/judge").json()
    n = 8

    def episode(i: int) -> tuple[float, float, str]:
        with client(server) as env:
            env.reset(task=TASK)
            junk = env.step(KernelAction(reply=f"session {i}: no code"))
            good = env.step(KernelAction(reply=fenced(SOLUTION + f"# variant {i % 2}\n")))
            return junk.reward, good.reward, good.observation.verdict["stage"]

    with ThreadPoolExecutor(n) as pool:
        results = list(pool.map(episode, range(n), timeout=120))
    assert results == [(-1.0, pytest.approx(0.2), "correct")] * n
    after = httpx.get(server["url"] + "/judge").json()
    assert after["judged"] - before["judged"] == n and after["submitted"] - before["submitted"] == n
    assert after["batches"] - before["batches"] <= n and after["most_in_flight"] <= after["workers"]
    assert after["in_flight"] == 0 and after["queued"] == 0 and after["failed_batches"] == 0
