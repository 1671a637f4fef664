"""Multi-turn GRPO's tool env: ``submit_kernel`` steps ``KernelOptEnv``, the episode reward keeps
rollouts and judge rates as the single-turn reward does, and the factory pickles and batches."""

import json

from transformers.utils import get_json_schema

from hawkeye_env.env import KernelOptEnv
from hawkeye_env.judge.parent.evaluator import Evaluator
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.tasks.registry import get_task, solution_source
from reward.score import REWARD_CORRECT
from training.data import fenced
from training.reward import make_episode_reward_func
from training.tool_env import NO_SUBMISSION_REWARD, SUBMIT_NOTE, make_environment_factory

TASK = "vector_add_fp32"


def test_submit_kernel_steps_the_env_and_the_reward_is_the_envs(tmp_path):
    factory = make_environment_factory(Evaluator(ResultStore(":memory:")), device="cpu", context="none", max_turns=3)
    env = factory()
    assert env.reset(task=TASK, prompt=[]) == SUBMIT_NOTE
    assert env.reward == NO_SUBMISSION_REWARD
    solution = solution_source(get_task(TASK))
    wrong = solution.replace("a + b, mask=mask", "a - b, mask=mask")

    feedback = env.submit_kernel(fenced(wrong))
    assert "Reward -0.500" in feedback and "Turns left: 2" in feedback and env.reward == -0.5
    reference_turn = KernelOptEnv(tasks=[TASK], store=":memory:", device="cpu", context="none", max_turns=3)
    reference_turn.reset(options={"task": TASK})
    obs = reference_turn.step(fenced(wrong))[0]
    # The tool's reply is the part of the env's next prompt that changed: same source, same feedback.
    # (Trial seeds are fresh per verdict, so the two feedbacks' numbers differ; their text does not.)
    source, _, judged = feedback.rsplit("\n\nReward", 1)[0].partition("\n\n## Judge feedback on the last attempt\n")
    assert source.startswith("## Current source (after turn 1 of 3)") and source in obs["prompt"]
    headline = judged.splitlines()[0]
    assert headline.startswith("[vector_add_fp32 on cpu] INCORRECT") and f"attempt\n{headline}\n" in obs["prompt"]
    reference_turn.close()
    feedback = env.submit_kernel(fenced(solution))
    assert "episode is over" in feedback and env.reward == REWARD_CORRECT
    assert "episode is over" in env.submit_kernel(fenced(wrong)) and env.reward == REWARD_CORRECT
    assert env.submissions == [fenced(wrong), fenced(solution)] and env.verdict.stage.value == "correct"

    # the recipe's episode reward: the envs' rewards, the judge rates and rollouts as single-turn keeps them
    silent = factory()
    silent.reset(task=TASK)
    logged, path = {}, tmp_path / "rollouts.jsonl"
    rewards = make_episode_reward_func(path)(prompts=[[]] * 2, completions=[[{"role": "assistant", "content": ""}]] * 2,
                                             environments=[env, silent], task=[TASK] * 2,
                                             log_metric=logged.__setitem__)
    assert rewards == [REWARD_CORRECT, NO_SUBMISSION_REWARD]
    rates = ("judge/correct_rate", "judge/compile_rate", "judge/no_source_rate")
    assert [logged[name] for name in rates] == [0.5, 0.5, 0.5]
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(r["step"], r["split"], r["stage"], r["reward"], r["turn_rewards"], len(r["submissions"])) for r in rows] \
        == [(0, "train", "correct", REWARD_CORRECT, [-0.5, REWARD_CORRECT], 2), (0, "train", "no_source", -1.0, [], 0)]

    reference = KernelOptEnv(tasks=[TASK], store=":memory:", device="cpu", context="none", max_turns=3,
                             target_speedup=None)
    reference.reset(options={"task": TASK})
    assert reference.step(fenced(wrong))[1] == -0.5 and reference.step(fenced(solution))[1] == REWARD_CORRECT
    reference.close()


def test_submit_kernel_has_a_tool_schema():
    from policies.openai_compat import SUBMIT_TOOL

    env = make_environment_factory(Evaluator(ResultStore(":memory:")), device="cpu")()
    schema = get_json_schema(env.submit_kernel)
    assert schema["function"]["name"] == "submit_kernel"
    assert list(schema["function"]["parameters"]["properties"]) == ["source"]
    json.dumps(schema)
    # The OpenAI policy's --tool-calls offers the same tool the model was trained with.
    assert SUBMIT_TOOL["function"]["name"] == schema["function"]["name"]
    assert SUBMIT_TOOL["function"]["parameters"]["required"] == schema["function"]["parameters"]["required"]
    assert (SUBMIT_TOOL["function"]["parameters"]["properties"]["source"]["type"]
            == schema["function"]["parameters"]["properties"]["source"]["type"])


def test_environment_factory_pickles_and_judges_a_batch_of_calls_together(tmp_path):
    import pickle
    from concurrent.futures import ThreadPoolExecutor

    from training.tool_env import EnvironmentFactory

    factory = EnvironmentFactory(str(tmp_path / "v.sqlite3"), device="cpu", context="none", max_turns=2)
    copy = pickle.loads(pickle.dumps(factory))
    assert copy == factory and getattr(copy, "_queue", None) is None
    envs = [copy() for _ in range(4)]
    assert len({id(e._judge) for e in envs}) == 1  # one queue per process, shared by the rollouts
    for env in envs:
        env.reset(task=TASK)
    solution = solution_source(get_task(TASK))
    with ThreadPoolExecutor(4) as pool:  # TRL's async trainer: each rollout's tool in its own thread
        feedback = list(pool.map(lambda e: e[1].submit_kernel(fenced(solution + f"# {e[0] % 2}\n")),
                                 enumerate(envs)))
    assert all("Reward 0.200" in f for f in feedback) and [e.rewards for e in envs] == [[REWARD_CORRECT]] * 4
    status = envs[0]._judge.status()
    assert status["judged"] == 4 and status["batches"] < 4
