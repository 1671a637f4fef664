"""The multi-turn training tool's profile option: rollouts get ``profile_kernel`` only when the factory
asks for it (TRL offers every public method as a tool), and it is the env's ``PROFILE`` action."""

from __future__ import annotations

import inspect

from hawkeye_env.judge.parent.evaluator import Evaluator
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.profile_action import NOTHING_TO_PROFILE
from training.tool_env import make_environment_factory


def _tools(env) -> set[str]:
    """What TRL offers as tools: the public functions of the class but ``reset`` and ``get_reward``."""
    names = {n for n, _ in inspect.getmembers(type(env), predicate=inspect.isfunction) if not n.startswith("_")}
    return names - {"reset", "get_reward"}


def test_profile_kernel_is_a_tool_only_when_asked_for_and_profiles_the_current_source():
    evaluator = Evaluator(ResultStore(":memory:"))
    assert _tools(make_environment_factory(evaluator, device="cpu", context="none")()) == {"submit_kernel"}
    env = make_environment_factory(evaluator, device="cpu", context="none", profile=True)()
    assert _tools(env) == {"submit_kernel", "profile_kernel"}
    env.reset(task="vector_add_fp32")
    reply = env.profile_kernel()
    assert NOTHING_TO_PROFILE in reply and env.reward == -1.0 and env.turns == 1
