"""Multi-turn GRPO: the tool env steps ``KernelOptEnv`` and TRL accepts it as an ``environment_factory``."""

import json

from transformers.utils import get_json_schema

from hawkeye_env.env import KernelOptEnv
from hawkeye_env.judge.parent.evaluator import Evaluator
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.tasks.registry import get_task, solution_source
from reward.score import REWARD_CORRECT
from training.config import TrainConfig
from training.data import fenced
from training.grpo import train
from training.tool_env import NO_SUBMISSION_REWARD, SUBMIT_NOTE, make_environment_factory

TASK = "vector_add_fp32"


def test_submit_kernel_steps_the_env_and_the_reward_is_the_envs():
    env = make_environment_factory(Evaluator(ResultStore(":memory:")), device="cpu", context="none", max_turns=3)()
    assert env.reset(task=TASK, prompt=[]) == SUBMIT_NOTE
    assert env.get_reward() == NO_SUBMISSION_REWARD
    solution = solution_source(get_task(TASK))
    wrong = solution.replace("a + b, mask=mask", "a - b, mask=mask")

    feedback = env.submit_kernel(fenced(wrong))
    assert "Reward -0.500" in feedback and "Turns left: 2" in feedback and env.get_reward() == -0.5
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
    assert "episode is over" in feedback and env.get_reward() == REWARD_CORRECT
    assert "episode is over" in env.submit_kernel(fenced(wrong)) and env.get_reward() == REWARD_CORRECT

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


def test_multi_turn_grpo_runs_with_the_env_reward(tiny_model, tmp_path, monkeypatch):
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    config = TrainConfig(model=tiny_model, output_dir=str(tmp_path / "mt"), context="none", max_steps=2,
                         batch_size=4, num_generations=4, max_completion_length=16, device="cpu",
                         judge_device="cpu", store=":memory:", multi_turn=True, max_turns=2, save_steps=1000,
                         report_to="none")
    trainer = train(config, split={"train": [TASK], "eval": []})
    logs = [h for h in trainer.state.log_history if "reward" in h]
    assert len(logs) == 2
    # The random tiny model never calls the tool, so every rollout gets the no-submission reward.
    assert all(h["rewards/KernelOptToolEnv/mean"] == NO_SUBMISSION_REWARD for h in logs)
    assert all(env.turns == 0 for env in trainer.environments)


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
