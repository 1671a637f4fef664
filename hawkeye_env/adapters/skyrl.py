"""SkyRL-gym: ``KernelOptTextEnv``, a ``skyrl_gym`` ``BaseTextEnv`` over ``KernelOptEnv``.

SkyRL builds one env per trajectory with ``env_config`` (its ``skyrl_gym`` config's entry for the
env) and the dataset row's ``extras``; the row's ``reward_spec.ground_truth`` (or ``extras["task"]``)
names the task, and ``extras["max_turns"]`` (which SkyRL's generator sets to its own ``max_turns``)
the episode length. ``init(prompt)`` returns the
env's own first messages (the row's prompt is replaced, so training and evaluation prompt alike);
each ``step(action)`` judges the reply through the process's shared judge and returns the env's
reward, ``done`` when the episode ends, and the judge's feedback (the next observation the env
shows) as the next user message. ``metadata`` holds the verdict; ``get_metrics`` the per-turn
rewards. With ``env_config={"profile": True}`` the env's ``PROFILE`` action is one of the replies
the prompt offers (``hawkeye_env/profile_action.py``): a step whose action is that word re-judges
the current source (same verdict and reward) and its observation adds the kernels' profile beside
the expert's (on CPU the sm_90 cross-compile's facts and what needs a GPU), ``metadata["profile"]``
the profile as data. Needs ``pip install 'hawkeye-env[skyrl]'``. Example::

    import skyrl_gym, hawkeye_env.adapters.skyrl as hs
    hs.register()                                  # id "hawkeye_kernel"
    env = skyrl_gym.make("hawkeye_kernel", env_config={"max_turns": 2},
                         extras={"reward_spec": {"ground_truth": "vector_add_fp32"}})
    messages, _ = env.init([])
    out = env.step(reply)    # {"observations": [...], "reward": 0.2, "done": True, "metadata": {...}}

The trainer's dataset rows name the env and the task (``env_class``, ``reward_spec.ground_truth``);
``skyrl_rows`` writes one per task a selection names, as the env takes it (ids or ``split:NAME``)::

    pandas.DataFrame(hs.skyrl_rows("split:train")).to_parquet("train.parquet")
    pandas.DataFrame(hs.skyrl_rows("split:validation")).to_parquet("validation.parquet")
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from hawkeye_env.adapters.common import judged_step, new_episode, shared_judge, task_prompts
from hawkeye_env.registration import KERNEL_OPT_ID
from hawkeye_env.tasks.selection import task_split

INSTALL_HINT = "the SkyRL-gym adapter needs skyrl-gym: pip install 'hawkeye-env[skyrl]'"
ENV_ID = "hawkeye_kernel"

try:
    from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput
except ImportError as exc:
    raise ImportError(INSTALL_HINT) from exc


class KernelOptTextEnv(BaseTextEnv):
    """One trajectory of ``hawkeye/KernelOpt-v3`` as a SkyRL text env; see the module docstring.

    ``env_config`` keys (all optional): ``context`` (``docs``), ``max_turns`` (1; the trainer's
    ``extras["max_turns"]`` wins, as in SkyRL's own envs),
    ``target_speedup`` (None: the first correct kernel ends the episode), ``store`` and ``device``
    (the shared judge's; default ``$HAWKEYE_STORE`` / ``$HAWKEYE_JUDGE_DEVICE``), ``profile``
    (False; True: the ``PROFILE`` action, module docstring).
    """

    def __init__(self, env_config: Any = None, extras: dict[str, Any] | None = None):
        super().__init__()
        config = dict(env_config or {})
        extras = extras or {}
        task = extras.get("task") or (extras.get("reward_spec") or {}).get("ground_truth")
        if not task:
            raise ValueError("extras needs reward_spec.ground_truth (or task): the task id to judge on")
        self.judge = shared_judge(config.get("store"), config.get("device"))
        self.max_turns = int(extras.get("max_turns") or config.get("max_turns", 1))
        self.env, self._first = new_episode(task, self.judge, context=config.get("context", "docs"),
                                            max_turns=self.max_turns,
                                            target_speedup=config.get("target_speedup"),
                                            allow_profile=bool(config.get("profile", False)))
        self.rewards: list[float] = []

    def init(self, prompt):
        """The env's ``[system, user]`` messages (the dataset's prompt is not used) and the task id."""
        return json.loads(self._first["messages"]), {"task": self.env.task_id}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        obs, reward, terminated, truncated, info = judged_step(self.env, self.judge, action)
        self.turns += 1
        self.rewards.append(float(reward))
        done = bool(terminated or truncated)
        observations = [] if done else [{"role": "user", "content": json.loads(obs["messages"])[-1]["content"]}]
        metadata = {"verdict": info["verdict"], "turn": info["turn"]}
        if "profile" in info:
            metadata["profile"] = info["profile"]
        return BaseTextEnvStepOutput(observations=observations, reward=float(reward), done=done, metadata=metadata)

    def get_metrics(self) -> dict[str, Any]:
        return {"turns": len(self.rewards), "final_reward": self.rewards[-1] if self.rewards else 0.0,
                "best_reward": max(self.rewards, default=0.0)}

    def close(self) -> None:
        self.env.close()


def register() -> None:
    """Register ``KernelOptTextEnv`` with ``skyrl_gym`` as ``ENV_ID`` (once)."""
    from skyrl_gym.envs.registration import register as skyrl_register
    from skyrl_gym.envs.registration import registry

    if ENV_ID not in registry:
        skyrl_register(id=ENV_ID, entry_point="hawkeye_env.adapters.skyrl:KernelOptTextEnv")


def skyrl_rows(tasks: str | Sequence[str] | None, context: str = "docs") -> list[dict]:
    """SkyRL dataset rows, one per task ``tasks`` selects (ids or ``split:NAME``; None: every task):
    ``prompt`` the env's first messages (``init`` shows the same), ``env_class`` ``ENV_ID``,
    ``reward_spec.ground_truth`` the task id, ``extra_info`` the task's split and the context."""
    return [{"data_source": KERNEL_OPT_ID, "prompt": messages, "env_class": ENV_ID,
             "reward_spec": {"method": "rule", "ground_truth": task_id},
             "extra_info": {"split": task_split(task_id), "index": i, "context": context}}
            for i, (task_id, messages) in enumerate(task_prompts(tasks, shared_judge(), context=context))]


__all__ = ["ENV_ID", "INSTALL_HINT", "KernelOptTextEnv", "register", "skyrl_rows"]
