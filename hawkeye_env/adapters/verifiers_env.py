"""verifiers (prime-rl): ``load_environment()`` and the taskset, the judge as the rubric.

verifiers 0.4 (``import verifiers.v1 as vf``) builds an environment from a taskset: here one
``KernelTask`` per task id whose prompt is the env's first observation (``system_prompt`` the
contract, ``prompt`` the user message) and whose ``@vf.reward`` is the env's reward of the reply,
judged by the one evaluator through the process's shared judge. ``KernelMultiTurnEnv`` plays the
user for multi-turn episodes: it sends the env's observation, steps ``KernelOptEnv`` with each
reply and sends the judge's feedback back, until the episode ends; the trace's reward is the last
step's reward and every turn's reward is recorded as a metric (``turn_<i>_reward``) for turn-level
credit assignment. With ``profile=True`` (``--env.taskset.profile true``) the env's ``PROFILE``
action is one of the replies its prompt offers (``hawkeye_env/profile_action.py``): a reply that is
that word re-judges the current source (same verdict and reward) and the feedback sent back adds
its kernels' profile beside the expert's; each profile's text is kept in the trace's
``info["hawkeye_profiles"]``. It is the env's action word rather than a verifiers tool: verifiers
0.4's tools are MCP toolsets served from their own runtime process, apart from the env's episode,
which holds the current source the profile reads, and the taskset's harness makes plain chat calls.
Needs ``pip install 'hawkeye-env[verifiers]'``. Example::

    from hawkeye_env.adapters.verifiers_env import load_environment
    env = load_environment(tasks=["vector_add_fp32"], context="docs", max_turns=3)   # max_turns=1: single-turn
    env = load_environment(tasks=["vector_add_fp32"], max_turns=3, target_speedup=1.0, profile=True)
    env = load_environment(tasks="split:train")     # a split, as the env takes it (tasks/selection.py)

verifiers 0.4 finds a taskset by its id, imported as a module (``-`` read as ``_``), and takes the
``Taskset``, ``Env`` and ``Harness`` subclasses that module exports in ``__all__``. The id is
``TASKSET_ID``, ``hawkeye-env``: the ``hawkeye_env`` package exports ``KernelTaskset``,
``KernelMultiTurnEnv`` and ``KernelChatHarness`` (``hawkeye_env.registration.VERIFIERS_ENTRY_POINTS``),
so ``vf-eval hawkeye-env`` and ``vf.load_environment`` build the same env as ``load_environment``
here, which goes through them. The player's harness makes its chat calls in-process through
verifiers' interception in a local runtime: a run needs an OpenAI-compatible URL and nothing else
(``vf-eval ... --client.base-url http://127.0.0.1:8000/v1 --no-push``, no login).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

from hawkeye_env.adapters.common import judged_step, new_episode, score_reply, shared_judge, task_prompts
from hawkeye_env.tasks.selection import select_tasks

INSTALL_HINT = "the verifiers adapter needs verifiers: pip install 'hawkeye-env[verifiers]'"
TASKSET_ID = "hawkeye-env"

try:
    import verifiers.v1 as vf
except ImportError as exc:
    raise ImportError(INSTALL_HINT) from exc


class KernelData(vf.TaskData):
    """One task: its id, the env's context mode and the episode length."""

    task_id: str
    context: str = "docs"
    max_turns: int = 1
    target_speedup: float | None = None
    profile: bool = False


class KernelTask(vf.Task[KernelData]):
    """A task whose reward is the env's reward of the rollout's last reply (single-turn)."""

    @vf.reward(weight=1.0)
    async def kernel_reward(self, trace: vf.Trace) -> float:
        if "hawkeye_rewards" in trace.info:  # the multi-turn env already stepped the episode
            return float(trace.info["hawkeye_rewards"][-1]) if trace.info["hawkeye_rewards"] else -1.0
        reward, verdict = await asyncio.to_thread(score_reply, self.data.task_id, trace.last_reply)
        trace.info["hawkeye_verdict"] = verdict
        return reward


class KernelTasksetConfig(vf.TasksetConfig):
    tasks: list[str] = []
    """task ids or splits (``split:train``; ``hawkeye tasks list --split``); empty means every registered task"""
    context: str = "docs"
    """unit context of the prompts: ``none``, ``docs``, ``units`` or ``full``"""
    max_turns: int = 1
    """judged replies per episode (``KernelMultiTurnEnv``)"""
    target_speedup: float | None = None
    """speedup that ends an episode early; None: the first correct kernel ends it"""
    profile: bool = False
    """accept the env's PROFILE action (the current source's kernels profiled beside the expert's)"""


class KernelTaskset(vf.Taskset[KernelTask, KernelTasksetConfig]):
    """One ``KernelTask`` per task, prompted with the env's own first observation."""

    def load(self) -> Iterator[KernelTask]:
        prompts = task_prompts(self.config.tasks or None, shared_judge(), context=self.config.context,
                               allow_profile=self.config.profile)
        for task_id, (system, user) in prompts:
            yield KernelTask(KernelData(id=task_id, name=task_id, task_id=task_id, context=self.config.context,
                                        max_turns=self.config.max_turns, target_speedup=self.config.target_speedup,
                                        profile=self.config.profile, system_prompt=system["content"],
                                        prompt=[{"role": "user", "content": user["content"]}]), self.config.task)


class KernelChatHarnessConfig(vf.HarnessConfig):
    id: str = TASKSET_ID


class KernelChatHarness(vf.Harness[KernelChatHarnessConfig]):
    """The player's program: one chat completion per segment, in this process, through the rollout's
    interception endpoint (``AsyncOpenAI(base_url=endpoint, api_key=secret)``), so verifiers records
    every call on the trace and applies the run's model and sampling. No tools, no runtime commands,
    nothing to install: the taskset's default harness (verifiers picks the Harness subclass the
    ``hawkeye_env`` package exports), so ``vf-eval hawkeye-env`` runs offline against any
    OpenAI-compatible URL. A later segment replays the whole conversation (``SUPPORTS_RESUME``)."""

    APPENDS_SYSTEM_PROMPT = True
    SUPPORTS_RESUME = True
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(self, ctx, trace, runtime, endpoint, secret, mcp_urls, data, **kwargs) -> vf.ProgramResult:
        from openai import AsyncOpenAI
        from verifiers.v1.dialects.chat import message_to_wire

        system, prompt = self.resolve_prompt(data)
        messages = [{"role": "system", "content": system}] if system else []
        if isinstance(prompt, str):
            messages.append({"role": "user", "content": prompt})
        else:
            messages += [message_to_wire(m) for m in prompt or []]
        async with AsyncOpenAI(base_url=endpoint, api_key=secret) as client:
            await client.chat.completions.create(model=ctx.model, messages=messages)
        return vf.ProgramResult(exit_code=0, stdout="", stderr="")


class KernelEnvConfig(vf.EnvConfig):
    player: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())
    """the policy's seat: the taskset's chat harness (``KernelChatHarness``) in a local runtime"""


class KernelMultiTurnEnv(vf.Env[KernelEnvConfig]):
    """The env plays the user: observation out, reply in, ``KernelOptEnv.step``, feedback out."""

    async def run(self, task, agents) -> None:
        judge = shared_judge()
        env, obs = new_episode(task.data.task_id, judge, context=task.data.context, max_turns=task.data.max_turns,
                               target_speedup=task.data.target_speedup, allow_profile=task.data.profile)
        try:
            async with agents.player.interaction(task) as interaction:
                # recorded before the interaction closes: closing scores the trace (``kernel_reward``)
                trace = interaction.trace
                trace.info["hawkeye_rewards"] = rewards = []
                trace.info["hawkeye_profiles"] = profiles = []
                segment = await interaction.turn()  # the task's prompt is the env's first observation
                while not segment.terminated:
                    obs, reward, terminated, truncated, info = await asyncio.to_thread(
                        judged_step, env, judge, segment.last_reply)
                    rewards.append(float(reward))
                    trace.info["hawkeye_verdict"] = info["verdict"]
                    if "profile" in info:
                        profiles.append(info["profile"]["text"])
                    trace.record_metric(f"turn_{len(rewards) - 1}_reward", float(reward))
                    if terminated or truncated:
                        break
                    segment = await interaction.turn(json.loads(obs["messages"])[-1]["content"])
        finally:
            env.close()


def load_environment(tasks: str | list[str] | None = None, context: str = "docs", max_turns: int = 1,
                     target_speedup: float | None = None, profile: bool = False, **env_config) -> KernelMultiTurnEnv:
    """The verifiers ``Env`` over ``KernelTaskset``, built by verifiers' loader from ``TASKSET_ID``:
    ``max_turns=1`` is single-turn (one judged reply), more is multi-turn (the judge's feedback goes
    back to the model after each reply); ``profile`` accepts the env's ``PROFILE`` action (module
    docstring). ``tasks``: ids or ``split:NAME`` (None: every task); an unknown one raises
    ``KeyError`` here. ``env_config``: further ``EnvConfig`` fields."""
    tasks = [tasks] if isinstance(tasks, str) else list(tasks or [])
    select_tasks(tasks or None)
    taskset = {"id": TASKSET_ID, "tasks": tasks, "context": context, "max_turns": max_turns,
               "target_speedup": target_speedup, "profile": profile}
    return vf.load_environment(vf.resolve_env_config({"taskset": taskset, **env_config}))


__all__ = ["INSTALL_HINT", "TASKSET_ID", "KernelChatHarness", "KernelChatHarnessConfig", "KernelData",
           "KernelEnvConfig", "KernelMultiTurnEnv", "KernelTask", "KernelTaskset", "KernelTasksetConfig",
           "load_environment"]
