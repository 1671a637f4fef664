"""Multi-turn GRPO: ``hawkeye/KernelOpt-v1`` as a TRL ``environment_factory`` with one tool.

TRL (``GRPOTrainer(environment_factory=...)``, experimental in TRL 1.16) makes one instance per
rollout, calls ``reset(**row)`` before generation, exposes every public method except ``reset`` and
``get_reward`` as a tool, and scores the finished rollout with ``get_reward()``. Here ``reset``
starts a ``KernelOptEnv`` episode on the row's ``task`` (the row's prompt is already the env's
observation) and appends how to submit; the one tool, ``submit_kernel(source)``, steps the env and
returns its feedback, so the model can read the verdict and resubmit until the episode ends.
Candidates are judged by the shared ``Evaluator`` in its worker processes, as in the env. Example::

    factory = make_environment_factory(Evaluator(ResultStore("verdicts.sqlite")), device="cuda", max_turns=4)
    GRPOTrainer(model, args=GRPOConfig(max_tool_calling_iterations=4, ...), train_dataset=rows,
                environment_factory=factory)
"""

from __future__ import annotations

from collections.abc import Callable

from hawkeye_env.env import KernelOptEnv
from hawkeye_env.judge.evaluator import Evaluator

SUBMIT_NOTE = """

## Tool use
Submit each attempt by calling `submit_kernel` with the reply text (the whole module in a fenced
block, or SEARCH/REPLACE blocks against the current source). The tool returns the judge's feedback;
resubmit until the kernel is correct or you run out of turns."""
#: Reward of a rollout that never called the tool: the env's ``no_source`` reward (reward v2).
NO_SUBMISSION_REWARD = -1.0


class KernelOptToolEnv:
    """One rollout's episode of ``hawkeye/KernelOpt-v1``; ``submit_kernel`` is its only tool.

    The rollout's reward (``get_reward``) is the env's reward for the last submission, the verdict
    of the source the episode ended on (the env terminates at the first correct kernel with
    ``target_speedup=None``, or when timed at the target speedup), and ``NO_SUBMISSION_REWARD``
    when the model never submitted.
    """

    def __init__(self, evaluator: Evaluator, device: str = "auto", context: str = "docs", max_turns: int = 4,
                 target_speedup: float | None = None, context_budget_chars: int = 12_000):
        self._env = KernelOptEnv(evaluator=evaluator, device=device, context=context, max_turns=max_turns,
                                 target_speedup=target_speedup, context_budget_chars=context_budget_chars)
        self._reward: float | None = None
        self._done = True
        self.turns = 0

    def reset(self, task: str, **row) -> str:
        """Start an episode on ``task``; returns the tool note appended to the prompt."""
        self._env.reset(options={"task": task})
        self._reward, self._done, self.turns = None, False, 0
        return SUBMIT_NOTE

    def submit_kernel(self, source: str) -> str:
        """Submit a candidate kernel to the judge and get its feedback.

        Args:
            source: The whole module defining class ModelNew in a ```python fenced block, or
                SEARCH/REPLACE blocks against the current source.

        Returns:
            The judge's feedback on the candidate: stage, reward, errors, speedups, and whether the episode is over.
        """
        if self._done:
            return "The episode is over: no more submissions are judged."
        obs, reward, terminated, truncated, info = self._env.step(source)
        self._reward, self.turns = float(reward), self.turns + 1
        self._done = terminated or truncated
        end = " The episode is over." if self._done else f" Turns left: {self._env.max_turns - self.turns}."
        return f"{obs['feedback']}\nReward {reward:.3f}.{end}"

    def get_reward(self) -> float:
        """The env's reward of the last submission (``NO_SUBMISSION_REWARD`` without one)."""
        return NO_SUBMISSION_REWARD if self._reward is None else self._reward


def make_environment_factory(evaluator: Evaluator, device: str = "auto", context: str = "docs", max_turns: int = 4,
                             target_speedup: float | None = None) -> Callable[[], KernelOptToolEnv]:
    """A zero-argument factory for ``GRPOTrainer(environment_factory=...)``, sharing ``evaluator``."""

    def factory() -> KernelOptToolEnv:
        return KernelOptToolEnv(evaluator, device, context, max_turns, target_speedup)

    return factory


__all__ = ["NO_SUBMISSION_REWARD", "SUBMIT_NOTE", "KernelOptToolEnv", "make_environment_factory"]
