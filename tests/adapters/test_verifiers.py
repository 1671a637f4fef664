"""verifiers 0.4: its loader and ``vf-eval`` find the env by the id ``hawkeye-env``, the taskset
prompts with the env's observation, a rollout's scoring (``Task.score``) gives the judge's reward,
and ``vf-eval`` itself (its CLI entry point, the README's command: a local base URL, ``--no-push``,
no login) runs real single- and multi-turn rollouts against a scripted chat-completions server on
loopback: verifiers' interception relays each call of the taskset's chat harness, the env steps
``KernelOptEnv`` with every reply and sends the judge's feedback back, and the trace carries the
judge's score. With ``--env.taskset.profile true`` a ``PROFILE`` reply is the env's profile action:
the feedback sent back carries the current source's profile (here a forward that raises: said so,
beside the expert's sm_90 cross-compile facts)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

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
from tests.adapters.chat_server import ScriptedChatServer  # noqa: E402
from tests.adapters.conftest import BROKEN, FIX, RAISING, SOLUTION, TASK, fenced  # noqa: E402


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
    argv = readme_command("http://127.0.0.1:8000/v1", [TASK, "softmax_fp32"], max_turns=4, context="docs")
    main([*argv, "--dry-run", "--output-dir", str(tmp_path)])
    [resolved] = tmp_path.glob("*/configs/resolved/eval.json")
    config = json.loads(resolved.read_text())
    taskset = config["env"]["taskset"]
    assert taskset["id"] == TASKSET_ID and taskset["tasks"] == [TASK, "softmax_fp32"]
    assert taskset["context"] == "docs" and taskset["max_turns"] == 4
    assert config["model"] == "scripted" and config["client"]["base_url"] == "http://127.0.0.1:8000/v1"
    assert config["push"] is False  # nothing is uploaded: no Prime login needed
    # the player runs locally, on the harness the taskset bundles (a chat call in this process)
    from verifiers.v1.configs.env import default_agent_harness

    player = config["env"]["player"]
    assert player["runtime"]["type"] == "subprocess" and player["harness"] is None
    assert type(default_agent_harness(TASKSET_ID)).__name__ == "KernelChatHarnessConfig"


@pytest.fixture
def vf_eval(tmp_path, monkeypatch):
    """``vf-eval``'s own entry point, in this process; returns ``run(argv) -> [trace dict]`` (the
    run's ``traces.jsonl``). The CLI routes SIGINT/SIGTERM to its own handler: put ours back after."""
    import signal

    from verifiers.v1.cli.eval.main import main

    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    monkeypatch.setattr("sys.argv", ["vf-eval"])

    def run(argv: list[str]) -> list[dict]:
        out = tmp_path / f"run{len(list(tmp_path.iterdir()))}"
        main([*argv, "--output-dir", str(out), "--no-rich"])
        [traces] = out.glob("*/traces.jsonl")
        return [trace for line in traces.read_text().splitlines() for trace in json.loads(line)["traces"]]

    yield run
    for sig, handler in handlers.items():
        signal.signal(sig, handler)


def readme_command(url: str, tasks: list[str], max_turns: int, context: str = "none") -> list[str]:
    """The README's ``vf-eval`` command: a local endpoint, no upload (``--no-push``), no login."""
    return [TASKSET_ID, "--env.taskset.tasks", json.dumps(tasks), "--env.taskset.context", context,
            "--env.taskset.max-turns", str(max_turns), "--model", "scripted", "--client.base-url", url, "--no-push"]


def test_vf_eval_profile_reply_sends_the_profile_and_a_failing_forward_is_said_not_raised(vf_eval, small_profiles):
    argv = [*readme_command("", [TASK], max_turns=3), "--env.taskset.profile", "true",
            "--env.taskset.target-speedup", "1.0"]
    with ScriptedChatServer(["PROFILE", fenced(RAISING), "PROFILE"]) as server:
        argv[argv.index("--client.base-url") + 1] = server.url
        [trace] = vf_eval(argv)
    assert trace["ok"] and trace["errors"] == [] and trace["info"]["hawkeye_rewards"][0] == -1.0
    assert "the single word PROFILE" in server.bodies[0]["messages"][-1]["content"]
    assert trace["info"]["hawkeye_verdict"]["stage"] == "runtime_error"
    [text] = trace["info"]["hawkeye_profiles"]  # the first PROFILE had no source to profile
    assert "Candidate: not profiled (runtime_error)" in text and "the forward fails on purpose" in text
    assert "Expert solution, same shape:\n- _add_kernel (1 launch)" in text and "registers/thread" in text
    assert "coalesced_access, achieved_tbps (TB/s): needs a GPU" in text


def test_vf_eval_single_turn_rollout_reaches_the_judges_score(vf_eval):
    with ScriptedChatServer([fenced(SOLUTION)]) as server:
        [trace] = vf_eval(readme_command(server.url, [TASK], max_turns=1))
    assert trace["ok"] and trace["errors"] == [] and trace["rewards"]["kernel_reward"]["score"] == pytest.approx(0.2)
    assert trace["info"]["hawkeye_verdict"]["stage"] == "correct" and trace["metrics"] == {"turn_0_reward": 0.2}
    [body] = server.bodies  # one request: the env's first observation, as the env shows it
    ref = KernelOptEnv(tasks=[TASK], store=":memory:", device="cpu", context="none")
    assert body["messages"] == json.loads(ref.reset(options={"task": TASK})[0]["messages"])
    assert body["model"] == "scripted"
    ref.close()


def test_vf_eval_multi_turn_rollout_sends_feedback_and_scores_the_last_reply(vf_eval):
    with ScriptedChatServer([fenced(BROKEN), FIX]) as server:
        [trace] = vf_eval(readme_command(server.url, [TASK], max_turns=3))
    assert trace["ok"] and trace["errors"] == [] and trace["info"]["hawkeye_rewards"] == [-0.5, pytest.approx(0.2)]
    assert trace["metrics"] == {"turn_0_reward": -0.5, "turn_1_reward": pytest.approx(0.2)}
    assert trace["rewards"]["kernel_reward"]["score"] == pytest.approx(0.2)  # the episode ended on a correct kernel
    first, second = server.bodies
    assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "user"]
    assert second["messages"][:3] == [*first["messages"], {"role": "assistant", "content": fenced(BROKEN)}]
    feedback = second["messages"][3]["content"]
    assert "INCORRECT" in feedback and "a - b" in feedback  # the judge's feedback and the current source
