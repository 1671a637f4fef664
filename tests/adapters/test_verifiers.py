"""verifiers 0.4: the taskset prompts with the env's observation, the task's reward is the judge's,
and the multi-turn env steps ``KernelOptEnv`` with every reply (driven by a scripted player that
speaks verifiers' interaction interface: ``interaction(task)``, ``turn(text)``, ``segment``)."""

from __future__ import annotations

import asyncio
import json
from contextlib import asynccontextmanager
from types import SimpleNamespace

import pytest

vf = pytest.importorskip("verifiers.v1", reason="the verifiers extra is not installed: pip install "
                         "'hawkeye-env[verifiers]'")

from hawkeye_env.adapters.verifiers_env import KernelMultiTurnEnv, KernelTask, load_environment  # noqa: E402
from hawkeye_env.env import KernelOptEnv  # noqa: E402
from tests.adapters.conftest import BROKEN, FIX, SOLUTION, TASK, fenced  # noqa: E402


def _trace(task: KernelTask, reply: str | None = None) -> vf.Trace:
    return vf.Trace(task=vf.TraceTask(type="KernelTask", data=task.data), agent=vf.AgentInfo(config=vf.AgentConfig()),
                    root_reply=reply)


def test_taskset_prompts_are_the_envs_first_observation():
    env = load_environment(tasks=[TASK, "softmax_fp32"], context="docs", max_turns=1)
    assert isinstance(env, KernelMultiTurnEnv)
    tasks = {t.data.task_id: t for t in env.taskset}
    assert sorted(tasks) == ["softmax_fp32", TASK]
    ref = KernelOptEnv(tasks=[TASK], store=":memory:", device="cpu", context="docs")
    system, user = json.loads(ref.reset(options={"task": TASK})[0]["messages"])
    data = tasks[TASK].data
    assert data.system_prompt == system["content"] and data.prompt[0].content == user["content"]
    ref.close()


@pytest.mark.parametrize("reply,expected", [(fenced(SOLUTION), 0.2), (fenced(BROKEN), -0.5), ("no code", -1.0)])
def test_single_turn_reward_is_the_judges(reply, expected):
    task = next(iter(load_environment(tasks=[TASK], context="none").taskset))
    trace = _trace(task, reply)
    asyncio.run(task.score(trace))
    assert trace.rewards["kernel_reward"].value == pytest.approx(expected)
    assert trace.info["hawkeye_verdict"]["task"] == TASK


class _ScriptedPlayer:
    """verifiers' agent seat: each ``turn(text)`` records the user text and answers the next reply."""

    def __init__(self, task, replies):
        self.replies, self.seen = list(replies), []
        self.trace = _trace(task)

    @asynccontextmanager
    async def interaction(self, task):
        yield self

    async def turn(self, text):
        self.seen.append(text)
        reply = self.replies.pop(0) if self.replies else ""
        return SimpleNamespace(terminated=not reply, last_reply=reply)


def test_multi_turn_steps_the_env_and_records_per_turn_rewards():
    env = load_environment(tasks=[TASK], context="none", max_turns=3)
    task = next(iter(env.taskset))
    player = _ScriptedPlayer(task, [fenced(BROKEN), FIX])
    asyncio.run(env.run(task, SimpleNamespace(player=player)))
    trace = player.trace
    assert trace.info["hawkeye_rewards"] == [-0.5, pytest.approx(0.2)]
    assert trace.metrics["turn_0_reward"] == -0.5 and trace.metrics["turn_1_reward"] == pytest.approx(0.2)
    assert len(player.seen) == 2 and "# Task vector_add_fp32" in player.seen[0]
    assert "INCORRECT" in player.seen[1] and "a - b" in player.seen[1]  # feedback and current source
    asyncio.run(task.score(trace))
    assert trace.rewards["kernel_reward"].value == pytest.approx(0.2)
