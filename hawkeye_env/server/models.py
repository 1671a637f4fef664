"""The wire types of the served env: OpenEnv ``Action``, ``Observation`` and ``State`` models.

They mirror ``hawkeye/KernelOpt-v3`` (``hawkeye_env/env.py``): an action is the model's reply
text, an observation carries the env's observation fields (``prompt``, ``messages`` as a list of
chat messages, ``source``, ``feedback``, ``turn``, ``best_speedup``) plus the verdict of the step
as a dict (``Verdict.to_dict()``), and OpenEnv's own ``reward`` and ``done``. Needs the ``serve``
extra (``pip install 'hawkeye-env[serve]'``). A reply is at most ``edits.MAX_REPLY_CHARS`` characters,
the env's own bound on what it parses; a longer one is refused (422) before it reaches the env.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from hawkeye_env.edits import MAX_REPLY_CHARS
from hawkeye_env.server import require_openenv

require_openenv()

from openenv.core.env_server.types import Action, Observation, State  # noqa: E402

#: Longest task id an action may name (the registry's longest is under 40 characters).
MAX_TASK_ID_CHARS = 128


class KernelAction(Action):
    """One reply of the model: a fenced module or SEARCH/REPLACE blocks against the current source."""

    reply: str = Field(max_length=MAX_REPLY_CHARS,
                       description="The model's reply text (a ```python block defining ModelNew, SEARCH/REPLACE "
                                   "blocks against the current source, or PROFILE where the server allows profiles), "
                                   f"at most {MAX_REPLY_CHARS} characters")
    task: str | None = Field(default=None, max_length=MAX_TASK_ID_CHARS,
                             description="Stateless HTTP /step only: the task to judge the reply on (a WebSocket "
                                         "session takes its task from reset)")


class KernelObservation(Observation):
    """The env's observation after ``reset`` or ``step``; ``reward``/``done`` are OpenEnv's fields."""

    task_id: str = Field(default="", description="task id of the episode")
    prompt: str = Field(default="", description="the whole prompt as one text (system, then user)")
    messages: list[dict[str, str]] = Field(default_factory=list, description="[system, user] chat messages")
    task: str = Field(default="", description="task text: description, reference, shapes, tolerances")
    source: str = Field(default="", description="current kernel source")
    feedback: str = Field(default="", description="the judge's feedback on the last step")
    turn: int = Field(default=0, description="steps taken in this episode")
    max_turns: int = Field(default=0, description="steps before the episode is truncated")
    best_speedup: float = Field(default=0.0, description="best timed speedup of a correct kernel this episode")
    terminated: bool = Field(default=False, description="the episode reached its target (Gymnasium's terminated)")
    truncated: bool = Field(default=False, description="the episode ran out of turns (Gymnasium's truncated)")
    verdict: dict[str, Any] | None = Field(default=None, description="Verdict.to_dict() of the step (None at reset)")


class KernelState(State):
    """Episode state: OpenEnv's ``episode_id``/``step_count`` plus task, turn and best speedup."""

    task_id: str | None = None
    turn: int = 0
    best_speedup: float = 0.0
    done: bool = False


__all__ = ["MAX_TASK_ID_CHARS", "KernelAction", "KernelObservation", "KernelState"]
