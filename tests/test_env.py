"""Tests for ``hawkeye/KernelOpt-v3``: API conformance, a scripted episode, junk actions, text-space
sanitizing, seeding, vector envs, context modes and rendering. All on CPU (``device="cpu"``, also on
GPU machines).

Judged steps spawn a worker each (about 2 s under the Triton interpreter); the module shares one
results store so repeated candidates are answered from it, and junk never reaches a worker.
"""

from __future__ import annotations

import json

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AsyncVectorEnv, SyncVectorEnv
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hawkeye_env
from hawkeye_env.env import KernelOptEnv, unit_metric_lines
from hawkeye_env.judge.parent.evaluator import Evaluator
from hawkeye_env.judge.parent.launch import run_job
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.shared.verdict import Stage, Verdict
from hawkeye_env.observation import CHARSET, TRUNCATION_MARKER, make_observation, sanitize
from hawkeye_env.registration import KERNEL_OPT_ID, register_envs
from hawkeye_env.tasks.registry import get_task, list_tasks
from reward.score import REWARD_CORRECT, REWARD_INCORRECT, REWARD_VERSION
from tests.vector_add_edits import BROKEN, FIX, SOLUTION, TASK
from units.lib.index import unit_context


@pytest.fixture(scope="module")
def evaluator(tmp_path_factory) -> Evaluator:
    ev = Evaluator(ResultStore(tmp_path_factory.mktemp("env") / "s.sqlite3"))
    yield ev
    ev.store.close()


@pytest.fixture
def no_worker(monkeypatch):
    """Fail the test if anything would start a judge worker."""

    def refuse(*args, **kwargs):
        raise AssertionError("a worker was started for an action that carries no source")

    monkeypatch.setattr(run_job, "run_in_worker", refuse)


def make_env(evaluator: Evaluator, **kwargs) -> KernelOptEnv:
    return KernelOptEnv(tasks=[TASK], evaluator=evaluator, device="cpu", **kwargs)


def test_registration_is_idempotent_and_make_works(tmp_path) -> None:
    register_envs()
    register_envs()
    assert KERNEL_OPT_ID in gymnasium.registry and hawkeye_env.register_envs is register_envs
    env = gymnasium.make(KERNEL_OPT_ID, tasks=[TASK], store=str(tmp_path / "s.sqlite3"), device="cpu")
    assert isinstance(env.unwrapped, KernelOptEnv)
    obs, info = env.reset(seed=0)
    assert obs in env.observation_space and info["task"] == TASK
    env.close()


@pytest.mark.filterwarnings("ignore:.*Box observation space maximum value is infinity")
def test_check_env_passes(tmp_path, no_worker) -> None:
    store = str(tmp_path / "s.sqlite3")
    env = gymnasium.make(KERNEL_OPT_ID, tasks=[TASK], store=store, device="cpu", render_mode="ansi")
    check_env(env.unwrapped, skip_render_check=False)
    env.close()


@pytest.mark.filterwarnings("ignore:.*Box observation space maximum value is infinity")
@pytest.mark.filterwarnings("ignore:.*Not able to test alternative render modes")
def test_check_env_passes_without_spec(evaluator, no_worker) -> None:
    """Built directly (no spec), the checker also runs its step-determinism check."""
    env = make_env(evaluator, render_mode="ansi")
    assert env.spec is None
    check_env(env, skip_render_check=False)


def test_scripted_episode_broken_then_fixed(evaluator) -> None:
    env = make_env(evaluator, target_speedup=None, max_turns=3)
    obs, _ = env.reset(seed=0)
    assert obs["source"] == "" and obs["feedback"] == "" and int(obs["turn"]) == 0

    obs, r1, terminated, truncated, info = env.step(f"Here is my kernel:\n```python\n{BROKEN}```\n")
    assert r1 == REWARD_INCORRECT and not terminated and not truncated
    assert info["verdict"]["stage"] == "incorrect" and info["verdict"]["compiled"]
    assert info["source"] == BROKEN and obs["source"] == BROKEN and int(obs["turn"]) == 1
    assert "INCORRECT" in obs["feedback"] and "a - b" in obs["prompt"] and "SEARCH" in obs["prompt"]

    obs, r2, terminated, truncated, info = env.step(FIX)
    assert r2 == REWARD_CORRECT > r1
    assert terminated and not truncated
    assert info["verdict"]["stage"] == "correct" and info["verdict"]["correct"]
    assert info["reward_version"] == REWARD_VERSION and info["turn"] == 2 and info["best_speedup"] == 0.0
    assert obs["source"] == SOLUTION and obs in env.observation_space
    assert json.loads(obs["messages"])[1]["content"].count("CORRECT") >= 1
    with pytest.raises(RuntimeError, match="reset"):
        env.step(FIX)


def test_cpu_with_numeric_target_never_terminates_on_speed(evaluator) -> None:
    """CPU verdicts are untimed: with target_speedup=1.0 a correct kernel runs to truncation."""
    env = make_env(evaluator, max_turns=2)
    env.reset(seed=0)
    _, r, terminated, truncated, _ = env.step(SOLUTION)
    assert r == REWARD_CORRECT and not terminated and not truncated
    _, _, terminated, truncated, info = env.step(SOLUTION)
    assert not terminated and truncated and info["verdict"]["cached"]


def test_source_is_kept_when_the_candidate_does_not_compile(evaluator) -> None:
    env = make_env(evaluator)
    env.reset(seed=0, options={"source": SOLUTION})
    obs, r, *_ = env.step("```python\nclass ModelNew(:\n    pass\n```")
    assert r == -0.5 and obs["source"] == SOLUTION
    assert "still the previous one" in obs["feedback"]


JUNK = {
    "empty": "",
    "whitespace": "  \n\t ",
    "prose": "Sure! I would tile the loop and use shared memory. Hope this helps.",
    "malformed_search": "<<<<<<< SEARCH\n    return out\n=======\n    return out * 1\n",
    "unmatched_search": "<<<<<<< SEARCH\n    return nothing_like_this\n=======\n    pass\n>>>>>>> REPLACE\n",
    "binary": bytes(range(256)).decode("latin-1") * 3,
    "nul_in_fence": "```python\nclass ModelNew:\x00 pass\n```",
    "surrogates": "```python\nclass ModelNew:\n    x = '\ud800'\n```",
    "fence_without_model": "```python\nimport torch\nx = 1\n```",
}


@pytest.mark.parametrize("name", sorted(JUNK))
def test_junk_actions_get_feedback_not_exceptions(evaluator, no_worker, name: str) -> None:
    env = make_env(evaluator, render_mode="ansi")
    obs, _ = env.reset(seed=0, options={"source": SOLUTION})
    obs, reward, terminated, _, info = env.step(JUNK[name])
    assert obs in env.observation_space
    assert reward <= -0.5 and not terminated
    assert info["verdict"]["stage"] == "no_source"
    assert "NO SOURCE" in obs["feedback"] and len(obs["feedback"].splitlines()) >= 3
    assert obs["source"] == SOLUTION and "unchanged" in obs["feedback"]
    assert isinstance(env.render(), str)


def test_edit_errors_explain_where(evaluator, no_worker) -> None:
    env = make_env(evaluator)
    env.reset(seed=0, options={"source": SOLUTION})
    obs, *_ = env.step(JUNK["malformed_search"])
    assert "'>>>>>>> REPLACE' is missing" in obs["feedback"]
    obs, *_ = env.step(JUNK["unmatched_search"])
    assert "SEARCH text not found" in obs["feedback"]


unicode_text = st.text(alphabet=st.characters(codec=None), max_size=300)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(task=unicode_text, units=unicode_text, source=unicode_text, feedback=unicode_text,
       turn=st.integers(0, 4), speedup=st.floats(0, 1e6))
def test_observation_is_always_in_the_space(evaluator, task, units, source, feedback, turn, speedup) -> None:
    env = make_env(evaluator)
    obs = make_observation(task, units, source, feedback, context="docs", turn=turn, max_turns=4,
                           best_speedup=speedup)
    assert env.observation_space.contains(obs)
    assert json.loads(obs["messages"])[0]["role"] == "system"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(action=st.text(alphabet=st.characters(codec=None), max_size=400))
def test_random_unicode_actions_stay_in_the_space(evaluator, no_worker, action) -> None:
    env = make_env(evaluator)
    env.reset(seed=0, options={"source": SOLUTION})
    obs, reward, *_ = env.step(action)
    assert env.observation_space.contains(obs) and reward <= -0.5


def test_sanitize_escapes_and_truncates() -> None:
    assert sanitize("naïve é — ok\x00\x1b😀") == "na\\xefve \\xe9 — ok\\x00\\x1b\\U0001f600"
    long = "x" * 50_000 + "tail"
    cut = sanitize(long, 20_000)
    assert len(cut) == 20_000 and cut.endswith("tail") and "characters cut by the env" in cut
    assert set(cut) <= CHARSET and len(TRUNCATION_MARKER) < 100


def test_long_source_is_truncated_into_the_space(evaluator) -> None:
    env = make_env(evaluator, max_text_chars=20_000)
    obs, _ = env.reset(seed=0, options={"source": "# é\n" * 10_000})
    assert obs in env.observation_space and "characters cut by the env" in obs["source"]
    json.loads(obs["messages"])


def test_reset_seed_picks_the_same_task(evaluator) -> None:
    env = KernelOptEnv(evaluator=evaluator, device="cpu")
    picks = [env.reset(seed=s)[1]["task"] for s in range(12)]
    assert picks == [env.reset(seed=s)[1]["task"] for s in range(12)]
    assert len(set(picks)) > 1 and set(picks) <= {t.id for t in list_tasks()}
    assert env.reset(seed=3, options={"task": "softmax_fp32"})[1]["task"] == "softmax_fp32"
    with pytest.raises(ValueError, match="unknown reset options"):
        env.reset(options={"tsak": TASK})


def _check_batch(obs: dict, n: int) -> None:
    assert isinstance(obs["task"], tuple) and len(obs["task"]) == n
    for i in range(n):
        assert obs["task"][i].startswith(f"# Task {TASK}") and "## Reply format" in obs["prompt"][i]
    assert obs["best_speedup"].shape == (n, 1)


def test_sync_vector_env(tmp_path) -> None:
    store = str(tmp_path / "s.sqlite3")
    venv = SyncVectorEnv([lambda: KernelOptEnv(tasks=[TASK], store=store, device="cpu")] * 2)
    obs, _ = venv.reset(seed=[0, 1])
    _check_batch(obs, 2)
    obs, rewards, *_, info = venv.step([SOLUTION, "no code here"])
    _check_batch(obs, 2)
    assert list(rewards) == [REWARD_CORRECT, -1.0]
    assert list(info["verdict"]["stage"]) == ["correct", "no_source"]
    assert obs["source"] == (SOLUTION, "")
    venv.close()


@pytest.mark.parametrize("context", ["fork", "forkserver"])
def test_async_vector_env(tmp_path, context) -> None:
    """``shared_memory=False`` (Text spaces) and ``daemon=False`` (the env starts workers), with
    envs forked after this process has already judged (the judge's forkserver belongs to it)."""
    store = str(tmp_path / "s.sqlite3")
    fn = lambda: KernelOptEnv(tasks=[TASK], store=store, device="cpu")  # noqa: E731
    parent = fn()
    parent.reset(seed=0)
    assert parent.step(SOLUTION)[1] == REWARD_CORRECT
    venv = AsyncVectorEnv([fn, fn], shared_memory=False, daemon=False, context=context)
    obs, _ = venv.reset(seed=[0, 1])
    _check_batch(obs, 2)
    obs, rewards, *_, info = venv.step([SOLUTION, BROKEN])
    _check_batch(obs, 2)
    assert list(rewards) == [REWARD_CORRECT, REWARD_INCORRECT]
    assert "CORRECT" in obs["feedback"][0] and "INCORRECT" in obs["feedback"][1]
    venv.close()


@pytest.mark.parametrize("mode", ["none", "docs", "units", "full"])
def test_context_modes_set_the_units_field(evaluator, mode: str) -> None:
    spec = get_task("softmax_fp32")
    for budget in (12_000, 3_000):
        env = KernelOptEnv(tasks=[spec.id], evaluator=evaluator, device="cpu", context=mode,
                           context_budget_chars=budget)
        obs, _ = env.reset(seed=0)
        assert obs["units"] == sanitize(unit_context(spec.tags, mode, budget))
        assert len(unit_context(spec.tags, mode, budget)) <= budget
        if mode == "none":
            assert obs["units"] == "" and "## Units" not in obs["prompt"]
        elif obs["units"]:
            assert f"## Units (context `{mode}`)" in obs["prompt"]


def test_full_context_is_a_superset_of_none(evaluator) -> None:
    spec = get_task("softmax_fp32")
    texts = {m: KernelOptEnv(tasks=[spec.id], evaluator=evaluator, device="cpu", context=m).reset(seed=0)[0]["units"]
             for m in ("none", "full")}
    assert texts["none"] == ""
    assert bool(texts["full"]) == bool(unit_context(spec.tags, "full", 12_000))


def test_render_ansi(evaluator, no_worker) -> None:
    env = make_env(evaluator, render_mode="ansi")
    env.reset(seed=0)
    first = env.render()
    assert isinstance(first, str) and "turn 0/4" in first
    env.step("not code")
    text = env.render()
    assert "NO SOURCE" in text and "turn 1/4 | no_source, reward -1.000" in text
    assert make_env(evaluator).render() is None


def test_constructor_rejects_bad_arguments(evaluator) -> None:
    with pytest.raises(ValueError, match="context"):
        make_env(evaluator, context="everything")
    with pytest.raises(ValueError, match="not both"):
        KernelOptEnv(evaluator=evaluator, store=":memory:")
    with pytest.raises(KeyError, match="unknown task"):
        KernelOptEnv(tasks=["nope"], evaluator=evaluator)
    with pytest.raises(ValueError, match="render_mode"):
        make_env(evaluator, render_mode="human")
    assert np.isinf(make_env(evaluator).observation_space["best_speedup"].high).all()


def test_unit_metric_lines_compare_the_verdict_with_the_unit_solution(monkeypatch) -> None:
    """CUDA feedback, checked without a GPU: a fake unit-harness subprocess gives the expert figure."""
    import hawkeye_env.units_verify as harness
    spec = get_task(TASK)
    n = spec.gpu_shapes[0]["N"]
    timed = Verdict(task=TASK, device="cuda", stage=Stage.CORRECT, correct=True, timed=True,
                    times_ms={"candidate": 12.0 * n / 3.0e12 * 1e3, "eager": 1.0}, speedup={"eager": 2.0})
    calls = []

    def fake_measure(names, device):
        assert device == "gpu"
        calls.extend(names)
        return [{"values": {"solution": 4.0}}]

    monkeypatch.setattr(harness, "verify_in_subprocess", fake_measure)
    monkeypatch.setattr("hawkeye_env.env._UNIT_REPORTS", {})
    lines = unit_metric_lines(spec, timed)
    assert lines[0].startswith("Unit metrics (diagnostic, weight 0")
    assert "coalesced_access: 3.000 TB/s" in lines[1] and "vs the unit solution's 4.000 TB/s" in lines[1]
    assert "75%; misses the 99% pass rule" in lines[1]
    unit_metric_lines(spec, timed)
    assert calls == ["coalesced_access"]
    cpu = Verdict(task=TASK, device="cpu", stage=Stage.CORRECT, correct=True)
    assert unit_metric_lines(spec, cpu) == []
    monkeypatch.setattr(harness, "verify_in_subprocess", lambda names, device: 1 / 0)
    monkeypatch.setattr("hawkeye_env.env._UNIT_REPORTS", {})
    assert "not measured (ZeroDivisionError" in unit_metric_lines(spec, timed)[1]


@pytest.mark.parametrize("mode", ["none", "docs", "units", "full"])
def test_one_prompt_for_env_evals_and_training(mode: str) -> None:
    """Byte-identical first prompts for every task: the env, ``hawkeye eval``'s observation builder
    (``policies.prompts``) and the training data (``training.data``), at the one default budget."""
    from policies.prompts import DEFAULT_CONTEXT_CHARS
    from policies.prompts import make_observation as eval_observation
    from training.data import grpo_prompts

    ids = [s.id for s in list_tasks()]
    env = KernelOptEnv(tasks=ids, store=":memory:", device="cpu", context=mode)
    training = {row["task"]: row["prompt"] for row in grpo_prompts(ids, mode, device="cpu")}
    assert DEFAULT_CONTEXT_CHARS == env.context_budget_chars
    for task_id in ids:
        obs, _ = env.reset(options={"task": task_id})
        ours = eval_observation(task_id, context=mode, device="cpu")
        assert ours["prompt"] == obs["prompt"] and ours["messages"] == obs["messages"], task_id
        assert json.loads(obs["messages"]) == training[task_id], task_id
    env.close()
