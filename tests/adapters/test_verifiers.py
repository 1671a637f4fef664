"""verifiers 0.4: its loader and ``vf-eval`` find the env by the id ``hawkeye-env``, the taskset
prompts with the env's observation, a rollout's scoring (``Task.score``, what a rollout runs on its
trace at close) gives the judge's reward, and the multi-turn env steps ``KernelOptEnv`` with every
reply (driven by a scripted player that speaks verifiers' interaction interface:
``interaction(task)``, ``turn(text)``, ``segment``)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from contextlib import asynccontextmanager
from types import SimpleNamespace

import pytest

vf = pytest.importorskip("verifiers.v1", reason="the verifiers extra is not installed: pip install "
                         "'hawkeye-env[verifiers]'")

from hawkeye_env.adapters.verifiers_env import (  # noqa: E402
    TASKSET_ID,
    KernelMultiTurnEnv,
    KernelTask,
    KernelTaskset,
    load_environment,
)
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
def test_verifiers_loader_finds_the_env_by_id_and_a_rollouts_score_is_the_judges(reply, expected):
    env = vf.load_environment(vf.resolve_env_config({"taskset": {"id": TASKSET_ID, "tasks": [TASK],
                                                                 "context": "none"}}))
    assert isinstance(env, KernelMultiTurnEnv) and isinstance(env.taskset, KernelTaskset)
    [task] = list(env.taskset)
    trace = _trace(task, reply)
    asyncio.run(task.score(trace))
    assert trace.rewards["kernel_reward"].value == pytest.approx(expected) and trace.reward == pytest.approx(expected)
    assert trace.info["hawkeye_verdict"]["task"] == TASK


def test_the_package_imports_without_verifiers_and_its_plugin_names_say_what_to_install():
    code = ("import sys\nsys.modules['verifiers'] = sys.modules['verifiers.v1'] = None\nimport hawkeye_env\n"
            "try:\n    hawkeye_env.KernelTaskset\nexcept ImportError as exc:\n    print(exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "pip install 'hawkeye-env[verifiers]'" in out


def test_vf_eval_resolves_the_readme_command(tmp_path, monkeypatch):
    from verifiers.v1.cli.eval.main import main

    monkeypatch.setattr("sys.argv", ["vf-eval"])
    main([TASKSET_ID, "--env.taskset.tasks", json.dumps([TASK, "softmax_fp32"]), "--env.taskset.context", "docs",
          "--env.taskset.max-turns", "4", "--model", "my-model", "--client.base-url", "http://localhost:8000/v1",
          "--dry-run", "--output-dir", str(tmp_path)])
    [resolved] = tmp_path.glob("*/configs/resolved/eval.json")
    config = json.loads(resolved.read_text())
    taskset = config["env"]["taskset"]
    assert taskset["id"] == TASKSET_ID and taskset["tasks"] == [TASK, "softmax_fp32"]
    assert taskset["context"] == "docs" and taskset["max_turns"] == 4
    assert config["model"] == "my-model" and config["client"]["base_url"] == "http://localhost:8000/v1"


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
