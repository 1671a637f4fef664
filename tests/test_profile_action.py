"""The env's profile action (``hawkeye_env/profile_action.py``) and its reward selection, on CPU: the
profile of the current source comes from the judge's own processes (a recording worker, the
trusted replay's sm_90 cross-compile), is paid what re-submitting the source pays, and says what
needs a GPU. One verdict and one profile of a small task."""

from __future__ import annotations

import gymnasium
import pytest

import hawkeye_env  # noqa: F401 - registers the env
from hawkeye_env.judge.parent.profiling import run
from hawkeye_env.profile_action import NOTHING_TO_PROFILE, is_profile_request
from hawkeye_env.tasks.registry import get_task, solution_source

TASK = "vector_add_fp32"


def _env(**kwargs):
    return gymnasium.make("hawkeye/KernelOpt-v3", tasks=[TASK], store=":memory:", device="cpu", max_turns=4,
                          **kwargs).unwrapped


@pytest.mark.parametrize("text, wanted", [("PROFILE", True), (" profile\n", True), ("```\nPROFILE\n```", True),
                                          ("PROFILE please", False), ("", False), ("class ModelNew: PROFILE", False)])
def test_a_profile_request_is_the_word_alone(text, wanted):
    assert is_profile_request(text) is wanted


def test_profile_action_reports_the_current_kernels_and_pays_as_a_resubmission(monkeypatch):
    monkeypatch.setattr(run, "CPU_RECORDING_BYTES", 0)  # record at the CPU shape: a fast test
    env = _env(allow_profile=True, reward="sol-v1")
    obs, info = env.reset(seed=0)
    assert info["reward_version"] == "sol-v1" and "the single word PROFILE" in obs["prompt"]
    obs, reward, *_, info = env.step("PROFILE")
    assert reward == -1.0 and NOTHING_TO_PROFILE in obs["feedback"] and "profile" not in info
    source = solution_source(get_task(TASK))
    obs, submitted, terminated, *_ = env.step(source)
    assert submitted == 0.2 and not terminated and "Reward under sol-v1" in obs["feedback"]
    obs, reward, _, _, info = env.step("PROFILE")
    assert reward == submitted and info["verdict"]["stage"] == "correct" and info["current_source"] == source
    candidate, expert = info["profile"]["candidate"], info["profile"]["expert"]
    assert candidate["stage"] == "ok" and expert["cached"]  # the expert's source is the candidate's: one profile
    kernel = candidate["kernels"][0]
    assert kernel["name"] == "_add_kernel" and kernel["registers"] > 0 and kernel["global_loads"]
    text = obs["feedback"]
    assert "cross-compile for sm_90" in text and f"- _add_kernel (1 launch): {kernel['num_warps']} warps" in text
    assert "Not measured: duration, achieved occupancy" in text and "Speed of light at this shape: H100" in text


def test_without_the_option_profile_is_prose_and_the_reward_must_be_a_known_version():
    env = _env()
    obs, _ = env.reset(seed=0)
    assert "PROFILE" not in obs["prompt"]
    _, reward, *_ = env.step("PROFILE")
    assert reward == -1.0
    with pytest.raises(ValueError, match="reward must be one of"):
        _env(reward="sol")
