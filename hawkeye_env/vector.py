"""``KernelOptVectorEnv``: ``num_envs`` copies of ``KernelOptEnv`` judged as one batch.

``SyncVectorEnv`` steps its envs one after another, so each candidate waits for the previous one's
verdict. This vector env splits every sub-env's step in two (``KernelOptEnv.prepare_step`` and
``finish_step``) and judges all the step's candidates with one ``evaluate_many`` call: duplicates
are judged once, correctness checks overlap on the worker pool and timed sections still never share
a GPU. It is the ``vector_entry_point`` of ``hawkeye/KernelOpt-v3``::

    import gymnasium, hawkeye_env
    envs = gymnasium.make_vec("hawkeye/KernelOpt-v3", num_envs=8, vectorization_mode="vector_entry_point",
                              tasks=["softmax_fp32"], store=":memory:", device="cpu")
    obs, infos = envs.reset(seed=0)                 # obs["prompt"] is a tuple of 8 prompts
    obs, rewards, terminated, truncated, infos = envs.step(replies)   # replies: 8 strings

``reset(options=...)`` passes the same options to every sub-env, except that a list or tuple of
``num_envs`` values gives sub-env ``i`` its ``i``-th (``options={"task": [...]}``: one task per
env). After each step ``last_steps[i]`` holds sub-env ``i``'s ``(source, Verdict)`` (None for an
env that was reset instead), for callers that keep the verdicts themselves (``evals/best_of_n.py``).

Observations are batched like ``SyncVectorEnv``'s (text fields as tuples, ``turn`` and
``best_speedup`` as arrays). Autoreset follows Gymnasium's default next-step mode: the step after an
episode ends resets that env, ignores its action and returns reward 0. ``infos`` holds each env's
step info in Gymnasium's vector-info layout: ``infos["task"][i]``, and nested dicts per key, e.g.
``infos["verdict"]["stage"][i]``, each with its ``_``-prefixed mask.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array

from hawkeye_env.env import KernelOptEnv
from hawkeye_env.judge.parent.evaluator import Evaluator, evaluate_many
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.shared.verdict import Verdict


class KernelOptVectorEnv(VectorEnv):
    """``num_envs`` ``KernelOptEnv``s sharing one evaluator, stepped through ``evaluate_many``.

    Args:
        num_envs: number of sub-environments.
        workers: candidates judged at once (``evaluate_many``'s default when None).
        evaluator / store: one ``Evaluator`` shared by every sub-env, or a results-store path for a
            new one (``":memory:"`` for a private store).
        use_cache, gpus: passed to ``evaluate_many`` (answer repeated candidates from the store; how
            many visible GPUs to judge on).
        on_verdict: optional ``on_verdict(env_index, verdict)``, called as each verdict a step
            judges arrives (progress bars); also settable as an attribute.
        **env_kwargs: every other ``KernelOptEnv`` argument (``tasks``, ``device``, ``context``,
            ``max_turns``, ``target_speedup``, ...), the same for every sub-env.
    """

    metadata = {"render_modes": ["ansi"], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int, workers: int | None = None, evaluator: Evaluator | None = None,
                 store: str | os.PathLike | None = None, use_cache: bool = True, gpus: int | None = None,
                 on_verdict: Callable[[int, Verdict], None] | None = None, **env_kwargs):
        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, not {num_envs}")
        if evaluator is not None and store is not None:
            raise ValueError("pass an evaluator or a store path, not both")
        self._owns_store = evaluator is None
        self.evaluator = evaluator if evaluator is not None else Evaluator(ResultStore(store))
        self.envs = [KernelOptEnv(evaluator=self.evaluator, **env_kwargs) for _ in range(num_envs)]
        self.num_envs, self.workers = num_envs, workers
        self.use_cache, self.gpus, self.on_verdict = use_cache, gpus, on_verdict
        self.last_steps: list[tuple[str, Verdict] | None] = [None] * num_envs
        self.device = self.envs[0].device
        self.render_mode = self.envs[0].render_mode
        self.single_observation_space = self.envs[0].observation_space
        self.single_action_space = self.envs[0].action_space
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._autoreset = np.zeros(num_envs, dtype=bool)

    def _batch(self, observations: list[dict]):
        out = create_empty_array(self.single_observation_space, self.num_envs)
        return concatenate(self.single_observation_space, observations, out)

    def reset(self, *, seed: int | Sequence[int | None] | None = None, options: dict | None = None):
        if seed is None or isinstance(seed, int):
            seeds = [None if seed is None else seed + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise ValueError(f"{len(seeds)} seeds for {self.num_envs} envs")
        observations, infos = [], {}
        for i, (env, s) in enumerate(zip(self.envs, seeds)):
            obs, info = env.reset(seed=s, options=self._options_for(options, i))
            observations.append(obs)
            infos = self._add_info(infos, info, i)
        self._autoreset[:] = False
        return self._batch(observations), infos

    def _options_for(self, options: dict | None, i: int) -> dict | None:
        """Sub-env ``i``'s reset options: a list or tuple value of ``num_envs`` entries is per env."""
        if options is None:
            return None
        out = {}
        for key, value in options.items():
            if isinstance(value, (list, tuple)):
                if len(value) != self.num_envs:
                    raise ValueError(f"options[{key!r}] has {len(value)} values for {self.num_envs} envs")
                value = value[i]
            out[key] = value
        return out

    def step(self, actions: Sequence[str]):
        actions = list(actions)
        if len(actions) != self.num_envs:
            raise ValueError(f"{len(actions)} actions for {self.num_envs} envs")
        prepared: dict[int, tuple[str, object]] = {}
        for i, (env, action) in enumerate(zip(self.envs, actions)):
            if not self._autoreset[i]:
                prepared[i] = env.prepare_step(action)
        batch = [i for i, (_, verdict) in prepared.items() if verdict is None]
        arrived = None if self.on_verdict is None else (lambda j, v: self.on_verdict(batch[j], v))
        verdicts = evaluate_many(self.evaluator, [(self.envs[i].task_id, prepared[i][0]) for i in batch],
                                 self.device, self.workers, self.use_cache, arrived, self.gpus) if batch else []
        judged = dict(zip(batch, verdicts))
        self.last_steps = [None] * self.num_envs
        observations, infos = [], {}
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        terminated = np.zeros(self.num_envs, dtype=bool)
        truncated = np.zeros(self.num_envs, dtype=bool)
        for i, env in enumerate(self.envs):
            if self._autoreset[i]:
                obs, info = env.reset()
            else:
                source, verdict = prepared[i]
                self.last_steps[i] = (source, verdict or judged[i])
                obs, rewards[i], terminated[i], truncated[i], info = env.finish_step(*self.last_steps[i])
            observations.append(obs)
            infos = self._add_info(infos, info, i)
        self._autoreset = terminated | truncated
        return self._batch(observations), rewards, terminated, truncated, infos

    def render(self) -> tuple[str | None, ...]:
        return tuple(env.render() for env in self.envs)

    def close_extras(self, **kwargs) -> None:
        if self._owns_store:
            self.evaluator.store.close()


__all__ = ["KernelOptVectorEnv"]
