"""SkyRL-gym: trajectories run as SkyRL's generator runs them (``skyrl_gym.make`` with the trainer's
``env_config`` and ``extras``, ``init``/``step``/``close`` in its env-worker threads, concurrently):
``init`` gives the env's prompt, each step the env's reward, the judge's feedback as the next user
message and the end of the episode; a reply without code never reaches the judge. With
``profile`` the env's ``PROFILE`` action is a step: the current source's sm_90 cross-compile facts
beside the expert's, its unit's metric and what needs a GPU."""

from __future__ import annotations

import asyncio
import copy
import json
from concurrent.futures import ThreadPoolExecutor

import pytest

skyrl_gym = pytest.importorskip("skyrl_gym", reason="the skyrl extra is not installed: pip install "
                                "'hawkeye-env[skyrl]'")

from omegaconf import DictConfig, OmegaConf  # noqa: E402 - skyrl-gym's own dependency

from hawkeye_env.adapters import skyrl as adapter  # noqa: E402
from hawkeye_env.env import KernelOptEnv  # noqa: E402
from hawkeye_env.profile_action import NOTHING_TO_PROFILE  # noqa: E402
from tests.adapters.conftest import BROKEN, FIX, SOLUTION, TASK, fenced  # noqa: E402


def make(**config):
    adapter.register()
    return skyrl_gym.make(adapter.ENV_ID, env_config={"context": "none", **config},
                          extras={"reward_spec": {"method": "rule", "ground_truth": TASK}})


async def agent_loop(executor, prompt: list[dict], extras: dict, replies: list[str], skyrl_gym_cfg, max_turns: int):
    """One trajectory as SkyRL's generator runs it (``SkyRLGymGenerator.agent_loop_trajectory_wise``):
    ``extras["max_turns"]`` set to the generator's, the env's ``env_config`` taken from the
    ``skyrl_gym`` config by env id, ``init``/``step``/``close`` in the generator's env-worker
    threads, the engine's reply (here the next scripted one) stepped until ``done``, then
    ``get_metrics``. Returns the chat history, the step rewards and the env's metrics."""
    loop = asyncio.get_running_loop()
    extras["max_turns"] = max_turns
    env = skyrl_gym.make(adapter.ENV_ID, env_config=skyrl_gym_cfg.get(adapter.ENV_ID, DictConfig({})), extras=extras)
    chat_history, _ = await loop.run_in_executor(executor, env.init, copy.deepcopy(prompt))
    rewards, done = [], False
    while not done:
        output = replies.pop(0)
        step = await loop.run_in_executor(executor, env.step, output)
        chat_history += [{"role": "assistant", "content": output}, *step["observations"]]
        rewards.append(step["reward"])
        done = step["done"]
    metrics = env.get_metrics()
    await loop.run_in_executor(executor, env.close)
    return chat_history, rewards, metrics


def test_trajectories_as_skyrls_generator_runs_them_get_the_envs_prompts_rewards_and_feedback(cpu_judge):
    adapter.register()
    # the generator's max_turns (3, through extras) wins over the env config's
    skyrl_gym_cfg = OmegaConf.create({"max_env_workers": 4, adapter.ENV_ID: {"context": "none", "max_turns": 1}})
    scripts = [[fenced(BROKEN + "# skyrl\n"), FIX], [fenced(SOLUTION + "# skyrl\n")], ["no code", "none", "nothing"]]
    row = {"reward_spec": {"method": "rule", "ground_truth": TASK}}
    before = cpu_judge.status()

    async def generate():
        with ThreadPoolExecutor(skyrl_gym_cfg.max_env_workers) as executor:
            return await asyncio.gather(*(agent_loop(executor, [{"role": "user", "content": "ignored"}],
                                                     copy.deepcopy(row), replies, skyrl_gym_cfg, max_turns=3)
                                          for replies in scripts))

    (fixed, fixed_rewards, fixed_metrics), (right, right_rewards, _), (prose, prose_rewards, prose_metrics) = \
        asyncio.run(generate())
    ref = KernelOptEnv(tasks=[TASK], store=":memory:", device="cpu", context="none")
    assert fixed[:2] == right[:2] == json.loads(ref.reset(options={"task": TASK})[0]["messages"])
    ref.close()
    assert fixed_rewards == [-0.5, pytest.approx(0.2)] and right_rewards == [pytest.approx(0.2)]
    assert [m["role"] for m in fixed] == ["system", "user", "assistant", "user", "assistant"]
    assert "INCORRECT" in fixed[3]["content"] and "a - b" in fixed[3]["content"]  # feedback and current source
    assert fixed_metrics == {"turns": 2, "final_reward": pytest.approx(0.2), "best_reward": pytest.approx(0.2)}
    assert prose_rewards == [-1.0, -1.0, -1.0] and prose_metrics["turns"] == 3  # truncated at the trainer's 3
    assert cpu_judge.status()["submitted"] - before["submitted"] == 3  # code replies only, through the shared judge


def test_single_turn_ends_after_one_reply_and_a_row_without_a_task_is_refused():
    env = make()
    env.init([])
    out = env.step("no code at all")
    assert out["done"] and out["reward"] == -1.0 and out["metadata"]["verdict"]["stage"] == "no_source"
    with pytest.raises(ValueError, match="ground_truth"):
        skyrl_gym.make(adapter.ENV_ID, env_config={}, extras={})


def test_the_profile_action_is_a_step_that_profiles_the_current_source_beside_the_expert(small_profiles):
    env = make(profile=True, max_turns=4, target_speedup=1.0)  # CPU verdicts are untimed: the episode goes on
    messages, _ = env.init([])
    assert "the single word PROFILE" in messages[-1]["content"]
    early = env.step("PROFILE")
    assert early["reward"] == -1.0 and NOTHING_TO_PROFILE in early["observations"][0]["content"]
    assert "profile" not in early["metadata"]
    submitted = env.step(fenced(SOLUTION))
    out = env.step("PROFILE")
    assert out["reward"] == submitted["reward"] == pytest.approx(0.2) and not out["done"]
    assert out["metadata"]["verdict"]["stage"] == "correct"
    profile, text = out["metadata"]["profile"], out["observations"][0]["content"]
    kernel = profile["candidate"]["kernels"][0]
    assert kernel["name"] == "_add_kernel" and kernel["registers"] > 0 and profile["expert"]["cached"]
    assert "cross-compile for sm_90" in text and "Not measured: duration, achieved occupancy" in text
    assert "coalesced_access, achieved_tbps (TB/s): needs a GPU" in text
    assert [u["unit"] for u in profile["units"]] == ["coalesced_access"] and profile["units"][0]["candidate"] is None
    env.close()
