"""The training reward is the evaluator's verdict.reward, judged in worker processes, with a breakdown."""

from hawkeye_env.judge.parent.evaluator import Evaluator
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.tasks.registry import get_task, solution_source
from reward.score import REWARD_CORRECT
from training.data import fenced
from training.reward import make_reward_func

TASK = "vector_add_fp32"


def test_reward_func_returns_the_evaluators_rewards_and_breakdown(monkeypatch):
    solution = solution_source(get_task(TASK))
    wrong = solution.replace("a + b, mask=mask", "a - b, mask=mask")
    assert wrong != solution
    completions = [
        [{"role": "assistant", "content": fenced(solution)}],
        [{"role": "assistant", "content": "Here it is:\n" + fenced(wrong)}],
        [{"role": "assistant", "content": "I am not sure how to write this kernel."}],
    ]
    evaluator = Evaluator(ResultStore(":memory:"))
    judged = []
    original = evaluator.evaluate

    def spy(task, source, device, use_cache=True, **kwargs):
        judged.append((task, source))
        return original(task, source, device, use_cache, **kwargs)

    monkeypatch.setattr(evaluator, "evaluate", spy)
    logged = {}
    reward_func = make_reward_func(evaluator, device="cpu", workers=2)
    rewards = reward_func(prompts=[[]] * 3, completions=completions, task=[TASK] * 3,
                          log_metric=lambda name, value: logged.__setitem__(name, value))

    # each source judged (the pool judges a worker that died without a reply once more, so a
    # loaded machine may show a source twice); the reply without code is never judged
    assert sorted(set(s for _, s in judged)) == sorted([solution, wrong])
    assert rewards == [original(TASK, solution, "cpu").reward, original(TASK, wrong, "cpu").reward, -1.0]
    assert rewards[0] == REWARD_CORRECT and rewards[1] == -0.5
    assert logged["judge/correct_rate"] == 1 / 3
    assert logged["judge/compile_rate"] == 2 / 3
    assert logged["judge/no_source_rate"] == 1 / 3
    assert logged["judge/violation_rate"] == 0.0
    assert "judge/mean_speedup" not in logged
    stats = reward_func.stats
    assert (stats.calls, stats.completions, stats.correct, stats.no_source) == (1, 3, 1, 1)


def test_reward_func_flags_violations_and_takes_plain_strings():
    hack = "```python\nimport os\nclass ModelNew:\n    pass\n```"
    reward_func = make_reward_func(Evaluator(ResultStore(":memory:")), device="cpu", workers=1)
    assert reward_func(prompts=["p"], completions=[hack], task=[TASK]) == [-1.0]
    assert reward_func.stats.last_batch["judge/violation_rate"] == 1.0


def test_reward_func_keeps_every_rollout(tmp_path):
    import json

    path = tmp_path / "rollouts.jsonl"
    reward_func = make_reward_func(Evaluator(ResultStore(":memory:")), device="cpu", workers=1, rollouts_path=path)
    reward_func(prompts=[[{"role": "user", "content": "p"}]] * 2, completions=["no code", "still none"],
                task=[TASK] * 2)
    reward_func(prompts=["q"], completions=["nothing"], task=[TASK])
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(r["step"], r["completion"], r["stage"], r["reward"]) for r in rows] == [
        (0, "no code", "no_source", -1.0), (0, "still none", "no_source", -1.0), (1, "nothing", "no_source", -1.0)]
    assert rows[0]["prompt"] == [{"role": "user", "content": "p"}] and rows[2]["verdict"]["task"] == TASK
