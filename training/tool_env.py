"""Multi-turn GRPO: ``hawkeye/KernelOpt-v3`` as a TRL ``environment_factory`` with one tool.

TRL (``GRPOTrainer(environment_factory=...)``, experimental in TRL 1.16) makes one instance per
rollout, calls ``reset(**row)`` before generation, exposes every public method except ``reset`` and
``get_reward`` as a tool, and hands the finished instances to the reward functions
(``environments=``). The recipe's reward function (``training.reward.make_episode_reward_func``)
reads each instance's ``reward`` and ``verdict`` and keeps rollouts and judge metrics as the
single-turn reward does; the env defines no ``get_reward``, so TRL adds no second reward source.
Here ``reset``
starts a ``KernelOptEnv`` episode on the row's ``task`` (the row's prompt is already the env's
observation) and appends how to submit; the one tool, ``submit_kernel(source)``, steps the env and
returns the sections of the env's next prompt that change from turn to turn (the current source
and the judge's feedback, ``observation.turn_sections``: the text the env and the multi-turn evals
show on that turn) with the reward and the turns left, so the model resubmits against what it
would see in the env until the episode ends. With ``EnvironmentFactory(profile=True)`` the
rollouts get a second tool, ``profile_kernel()`` (``KernelOptProfileToolEnv``): the env's ``PROFILE``
action (``hawkeye_env/profile_action.py``), a turn that re-judges the current source and returns
its kernels' profile beside the expert's; off by default, since TRL offers every public method.
Submissions go through a ``JudgeQueue`` (``hawkeye_env/server/judge_queue.py``) over the shared
``Evaluator``: calls that arrive together (TRL's async GRPO trainer runs each rollout's tools in
its own thread) are judged in one ``evaluate_many`` batch. TRL's synchronous trainer calls tools one
rollout after another, so there each batch holds one candidate. The factory is a top-level class
(``EnvironmentFactory``) holding a store path, not an evaluator, so it pickles into the async
trainer's rollout process, which then builds its own evaluator and queue. Example::

    factory = EnvironmentFactory("runs/grpo/verdicts.sqlite", device="cuda", max_turns=4)
    GRPOTrainer(model, reward_funcs=[make_episode_reward_func()], environment_factory=factory,
                args=GRPOConfig(max_tool_calling_iterations=4, ...), train_dataset=rows)
"""

from __future__ import annotations

from dataclasses import dataclass

from hawkeye_env.env import KernelOptEnv
from hawkeye_env.judge.parent.decide.finish import no_source_verdict
from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.observation import CONTEXT_BUDGET_CHARS, turn_sections
from hawkeye_env.profile_action import PROFILE_ACTION
from hawkeye_env.server.judge_queue import JudgeQueue

SUBMIT_NOTE = """

## Tool use
Submit each attempt by calling `submit_kernel` with the reply text (the whole module in a fenced
block, or SEARCH/REPLACE blocks against the current source). The tool returns the current source
and the judge's feedback; resubmit until the kernel is correct or you run out of turns."""
#: Reward of a rollout that never called the tool: the env's ``no_source`` reward (reward v3).
NO_SUBMISSION_REWARD = -1.0


class KernelOptToolEnv:
    """One rollout's episode of ``hawkeye/KernelOpt-v3``; ``submit_kernel`` is its only tool.

    The rollout's reward (``reward``) is the env's reward for the last submission, the verdict
    of the source the episode ended on (the env terminates at the first correct kernel with
    ``target_speedup=None``, or when timed at the target speedup), and ``NO_SUBMISSION_REWARD``
    when the model never submitted; ``verdict`` is that submission's ``Verdict`` (a ``no_source``
    one without a submission) and ``submissions`` every reply the tool received, in order.
    """

    def __init__(self, judge: Evaluator | JudgeQueue, device: str = "auto", context: str = "docs", max_turns: int = 4,
                 target_speedup: float | None = None, context_budget_chars: int = CONTEXT_BUDGET_CHARS,
                 allow_profile: bool = False):
        self._judge = judge if isinstance(judge, JudgeQueue) else JudgeQueue(judge, device)
        self._env = KernelOptEnv(evaluator=self._judge.evaluator, device=self._judge.device, context=context,
                                 max_turns=max_turns, target_speedup=target_speedup,
                                 context_budget_chars=context_budget_chars, allow_profile=allow_profile)
        self.rewards: list[float] = []
        self.submissions: list[str] = []
        self._verdict = None
        self._done = True
        self.turns = 0

    def reset(self, task: str, **row) -> str:
        """Start an episode on ``task``; returns the tool note appended to the prompt."""
        self._env.reset(options={"task": task})
        self._verdict, self._done, self.turns, self.rewards, self.submissions = None, False, 0, [], []
        return SUBMIT_NOTE

    def submit_kernel(self, source: str) -> str:
        """Submit a candidate kernel to the judge and get its feedback.

        Args:
            source: The whole module defining class ModelNew in a ```python fenced block, or
                SEARCH/REPLACE blocks against the current source.

        Returns:
            The current source and the judge's feedback on the candidate (stage, errors, speedups),
            its reward, and whether the episode is over.
        """
        if self._done:
            return "The episode is over: no more submissions are judged."
        self.submissions.append(source)
        candidate, verdict = self._env.prepare_step(source)
        if verdict is None:
            verdict = self._judge.judge(self._env.task_id, candidate)
        obs, reward, terminated, truncated, info = self._env.finish_step(candidate, verdict)
        self._verdict, self.turns = verdict, self.turns + 1
        self.rewards.append(float(reward))
        self._done = terminated or truncated
        end = " The episode is over." if self._done else f" Turns left: {self._env.max_turns - self.turns}."
        sections = turn_sections(info["current_source"], obs["feedback"], info["turn"], self._env.max_turns)
        return f"{sections}\n\nReward {reward:.3f}.{end}"

    @property
    def reward(self) -> float:
        """The env's reward of the last submission (``NO_SUBMISSION_REWARD`` without one).

        ``rewards`` keeps every submission's reward in order, for turn-level credit assignment
        (Dr. Kernel's TRLOO: a turn's return against the leave-one-out mean of the group)."""
        return NO_SUBMISSION_REWARD if self._verdict is None else self.rewards[-1]

    @property
    def verdict(self):
        """The last submission's ``Verdict``; a ``no_source`` one when the model never submitted."""
        if self._verdict is None:
            return no_source_verdict(self._env.task_id, self._judge.device, "the model never called submit_kernel")
        return self._verdict


class KernelOptProfileToolEnv(KernelOptToolEnv):
    """``KernelOptToolEnv`` with a second tool, ``profile_kernel`` (the env's ``PROFILE`` action)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs, allow_profile=True)

    def profile_kernel(self) -> str:
        """Profile the current kernel (the last submission that compiled) instead of submitting a new one.

        Returns:
            The judge's feedback on the current source, the same verdict and reward as submitting it
            again, followed by its kernels' profile beside the expert solution's: registers, spills,
            shared memory, instruction mix and, on a GPU, Nsight Compute counters. Uses a turn.
        """
        return self.submit_kernel(PROFILE_ACTION)


@dataclass
class EnvironmentFactory:
    """A picklable zero-argument factory for ``GRPOTrainer(environment_factory=...)``.

    Its environments share one ``JudgeQueue`` per process, built on the first call from ``store``
    (a results-store path or ``":memory:"``) and ``timeout_s``; pickling keeps the settings only.
    """

    store: str = ":memory:"
    device: str = "auto"
    context: str = "docs"
    max_turns: int = 4
    target_speedup: float | None = None
    context_budget_chars: int = CONTEXT_BUDGET_CHARS
    timeout_s: float = 300.0
    workers: int | None = None
    profile: bool = False  # give rollouts the profile_kernel tool (KernelOptProfileToolEnv)

    def __call__(self) -> KernelOptToolEnv:
        kind = KernelOptProfileToolEnv if self.profile else KernelOptToolEnv
        return kind(self.judge(), self.device, self.context, self.max_turns, self.target_speedup,
                    self.context_budget_chars)

    def judge(self) -> JudgeQueue:
        """This process's queue for the factory's settings."""
        queue = getattr(self, "_queue", None)
        if queue is None:
            evaluator = Evaluator(ResultStore(self.store), EvalConfig(timeout_s=self.timeout_s))
            queue = JudgeQueue(evaluator, self.device, self.workers)
            object.__setattr__(self, "_queue", queue)
        return queue

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "_queue"}


def make_environment_factory(evaluator: Evaluator, device: str = "auto", context: str = "docs", max_turns: int = 4,
                             target_speedup: float | None = None, profile: bool = False) -> EnvironmentFactory:
    """An ``EnvironmentFactory`` judging with ``evaluator`` (its queue is built here, so this one
    factory shares ``evaluator``; a pickled copy builds its own from the store path); ``profile``
    gives its rollouts the ``profile_kernel`` tool."""
    factory = EnvironmentFactory(evaluator.store.path or ":memory:", device, context, max_turns, target_speedup,
                                 timeout_s=evaluator.config.timeout_s, profile=profile)
    object.__setattr__(factory, "_queue", JudgeQueue(evaluator, device))
    return factory


__all__ = ["NO_SUBMISSION_REWARD", "SUBMIT_NOTE", "EnvironmentFactory", "KernelOptProfileToolEnv", "KernelOptToolEnv",
           "make_environment_factory"]
