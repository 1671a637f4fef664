"""SkyRL-gym: ``skyrl_gym.make`` builds the text env, ``init`` gives the env's prompt and each step
the env's reward, feedback as the next user message and the end of the episode."""

from __future__ import annotations

import json

import pytest

skyrl_gym = pytest.importorskip("skyrl_gym", reason="the skyrl extra is not installed: pip install "
                                "'hawkeye-env[skyrl]'")

from hawkeye_env.adapters import skyrl as adapter  # noqa: E402
from hawkeye_env.env import KernelOptEnv  # noqa: E402
from tests.adapters.conftest import BROKEN, FIX, TASK, fenced  # noqa: E402


def make(**config):
    adapter.register()
    return skyrl_gym.make(adapter.ENV_ID, env_config={"context": "none", **config},
                          extras={"reward_spec": {"method": "rule", "ground_truth": TASK}})


def test_init_is_the_envs_prompt_and_a_multi_turn_episode_is_the_envs():
    env = make(max_turns=3)
    assert isinstance(env, adapter.KernelOptTextEnv)
    messages, meta = env.init([{"role": "user", "content": "ignored"}])
    ref = KernelOptEnv(tasks=[TASK], store=":memory:", device="cpu", context="none")
    assert messages == json.loads(ref.reset(options={"task": TASK})[0]["messages"]) and meta == {"task": TASK}
    ref.close()
    out = env.step(fenced(BROKEN))
    assert out["reward"] == -0.5 and not out["done"] and out["metadata"]["verdict"]["stage"] == "incorrect"
    assert out["observations"][0]["role"] == "user" and "INCORRECT" in out["observations"][0]["content"]
    out = env.step(FIX)
    assert out["reward"] == pytest.approx(0.2) and out["done"] and out["observations"] == []
    assert env.get_metrics() == {"turns": 2, "final_reward": pytest.approx(0.2), "best_reward": pytest.approx(0.2)}
    env.close()


def test_single_turn_ends_after_one_reply_and_a_row_without_a_task_is_refused():
    env = make()
    env.init([])
    out = env.step("no code at all")
    assert out["done"] and out["reward"] == -1.0 and out["metadata"]["verdict"]["stage"] == "no_source"
    with pytest.raises(ValueError, match="ground_truth"):
        skyrl_gym.make(adapter.ENV_ID, env_config={}, extras={})
