"""The profile action and the reward choice through the served env and ``hawkeye serve``: a session
built with ``allow_profile`` offers ``PROFILE`` in its prompt and answers it (here with no source
yet, so nothing is judged), and the command line passes both options to the app."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

pytest.importorskip("openenv.core", reason="the serve extra is not installed: pip install 'hawkeye-env[serve]'")

from hawkeye_env.cli import app  # noqa: E402
from hawkeye_env.judge.parent.evaluator import Evaluator  # noqa: E402
from hawkeye_env.judge.parent.store import ResultStore  # noqa: E402
from hawkeye_env.profile_action import NOTHING_TO_PROFILE  # noqa: E402
from hawkeye_env.server.environment import HawkeyeEnvironment  # noqa: E402
from hawkeye_env.server.judge_queue import JudgeQueue  # noqa: E402
from hawkeye_env.server.models import KernelAction  # noqa: E402


def test_a_served_session_takes_the_profile_action():
    queue = JudgeQueue(Evaluator(ResultStore(":memory:")), "cpu")
    env = HawkeyeEnvironment(queue, tasks=["vector_add_fp32"], allow_profile=True, reward="sol-v1")
    obs = env.reset(task="vector_add_fp32")
    assert "the single word PROFILE" in obs.prompt
    obs = env.step(KernelAction(reply="PROFILE"))
    assert obs.reward == -1.0 and NOTHING_TO_PROFILE in obs.feedback and "Reward under sol-v1" in obs.feedback


def test_hawkeye_serve_passes_the_profile_and_reward_options(monkeypatch):
    import hawkeye_env.server.app as server_app

    seen = {}
    monkeypatch.setattr(server_app, "serve", lambda evaluator, **kwargs: seen.update(kwargs))
    args = ["serve", "--device", "cpu", "--tasks", "vector_add_fp32"]
    result = CliRunner().invoke(app, [*args, "--allow-profile", "--reward", "sol-v1"])
    assert result.exit_code == 0, result.output
    assert seen["allow_profile"] is True and seen["reward"] == "sol-v1"
    result = CliRunner().invoke(app, [*args, "--reward", "sol"])
    assert result.exit_code == 2 and "--reward must be one of" in result.output
