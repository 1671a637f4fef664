"""``KernelOptVectorEnv`` (the vector entry point): one ``evaluate_many`` batch per step, the same
rewards as single envs, text observations batched as tuples, next-step autoreset."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

import hawkeye_env  # noqa: F401 - registers the env
import hawkeye_env.vector as vector
from hawkeye_env.env import KernelOptEnv
from hawkeye_env.tasks.registry import get_task, solution_source

TASK = "vector_add_fp32"
GOOD = solution_source(get_task(TASK))
BROKEN = GOOD.replace("tl.store(out_ptr + offs, a + b, mask=mask)", "tl.store(out_ptr + offs, a - b, mask=mask)")
assert BROKEN != GOOD


def make(num_envs: int, **kw):
    return gymnasium.make_vec("hawkeye/KernelOpt-v3", num_envs=num_envs, vectorization_mode="vector_entry_point",
                              tasks=[TASK], store=":memory:", device="cpu", **kw)


def test_one_batch_per_step_and_the_same_rewards_as_single_envs(monkeypatch):
    batches = []
    real = vector.evaluate_many

    def spy(evaluator, jobs, *args, **kwargs):
        batches.append(len(jobs))
        return real(evaluator, jobs, *args, **kwargs)

    monkeypatch.setattr(vector, "evaluate_many", spy)
    envs = make(4, target_speedup=None, max_turns=3)
    obs, _ = envs.reset(seed=0)
    assert isinstance(obs["prompt"], tuple) and len(obs["prompt"]) == 4
    assert envs.observation_space.contains(obs)
    actions = [GOOD, BROKEN, "no code here", GOOD]
    obs, rewards, terminated, truncated, infos = envs.step(actions)
    assert batches == [3]  # the prose action needs no judging
    assert envs.observation_space.contains(obs)
    assert list(infos["verdict"]["stage"]) == ["correct", "incorrect", "no_source", "correct"]
    single = KernelOptEnv(tasks=[TASK], store=":memory:", device="cpu", target_speedup=None, max_turns=3)
    expected = []
    for action in actions:
        single.reset(seed=0)
        expected.append(single.step(action)[1])
    single.close()
    np.testing.assert_allclose(rewards, expected)
    assert list(terminated) == [True, False, False, True] and not truncated.any()
    assert list(obs["turn"]) == [1, 1, 1, 1]
    envs.close()


def test_next_step_autoreset_and_truncation():
    envs = make(2, target_speedup=None, max_turns=2)
    envs.reset(seed=1)
    _, _, terminated, truncated, _ = envs.step([GOOD, "junk"])
    assert list(terminated) == [True, False] and list(truncated) == [False, False]
    obs, rewards, terminated, truncated, _ = envs.step(["ignored: this env resets", "junk again"])
    assert rewards[0] == 0.0 and obs["turn"][0] == 0 and obs["source"][0] == ""
    assert list(truncated) == [False, True] and obs["turn"][1] == 2
    obs, rewards, _, _, _ = envs.step([GOOD, "ignored"])
    assert rewards[1] == 0.0 and obs["turn"][1] == 0 and rewards[0] > 0
    envs.close()


def test_wrong_action_count_is_an_error():
    envs = make(2)
    envs.reset(seed=0)
    with pytest.raises(ValueError, match="3 actions for 2 envs"):
        envs.step([GOOD, GOOD, GOOD])
    envs.close()


def test_per_env_reset_options_last_steps_and_verdict_callback():
    arrived = []
    envs = vector.KernelOptVectorEnv(3, store=":memory:", tasks=[TASK, "softmax_fp32"], device="cpu",
                                     on_verdict=lambda i, v: arrived.append((i, v.task)))
    _, infos = envs.reset(options={"task": [TASK, "softmax_fp32", TASK]})
    assert list(infos["task"]) == [TASK, "softmax_fp32", TASK]
    envs.step([GOOD, "no code here", BROKEN])
    assert sorted(arrived) == [(0, TASK), (2, TASK)]  # the prose action was never judged
    (s0, v0), (s1, v1), (s2, v2) = envs.last_steps
    assert s0 == GOOD and v0.stage.value == "correct" and s1 == "" and v1.stage.value == "no_source"
    assert v2.stage.value == "incorrect" and v2.task == TASK
    with pytest.raises(ValueError, match="2 values for 3 envs"):
        envs.reset(options={"task": [TASK, TASK]})
    envs.close()
