"""The prompt every LLM policy sends and the parsing of what comes back.

The templates live in ``hawkeye_env/observation.py``, shared with the Gymnasium env, so a policy
evaluated here reads exactly what it reads during training: the contract (system message), the
task's description, reference source, shapes, dtypes, allowed torch ops and tolerances, the unit
context (``units.lib.index.unit_context``), the current source, the judge's feedback and the reply
format (a fenced ```python block defining ``ModelNew``, or SEARCH/REPLACE blocks).

``make_observation`` builds the observation dict a policy reads (``policies/base.py``): the env's
observation plus ``task_id`` and any extra keys (``trajectory``, ``last_compiled_source``).
``chat_messages`` gives its chat messages; ``parse_reply`` turns a reply into candidate source.

Example::

    from policies.prompts import chat_messages, make_observation
    obs = make_observation("softmax_fp32", context="docs")
    system, user = chat_messages(obs)
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from hawkeye_env import observation as env_obs
from hawkeye_env.edits import to_candidate
from hawkeye_env.tasks.registry import get_task
from units.lib.index import unit_context

#: Unit context budget in characters: the env's own (``observation.CONTEXT_BUDGET_CHARS``), so an
#: evaluated policy reads the prompt it was trained on.
DEFAULT_CONTEXT_CHARS = env_obs.CONTEXT_BUDGET_CHARS


def make_observation(
    task_id: str, context: str = "docs", source: str = "", feedback: str = "", turn: int = 0,
    max_turns: int = 1, device: str = "cpu", gpu: str = "", baselines_ms: Mapping[str, float] | None = None,
    budget_chars: int = DEFAULT_CONTEXT_CHARS, **extra,
) -> dict:
    """The observation of ``policies/base.py`` for ``task_id`` at ``turn``.

    ``context`` is a ``units.lib.index.CONTEXT_MODES`` mode; ``baselines_ms`` (baseline -> median ms at
    the timed shape) appears in the task text when known. ``extra`` keys are added unchanged.
    """
    spec = get_task(task_id)
    obs = env_obs.make_observation(
        env_obs.render_task(spec, device, gpu, baselines_ms), unit_context(spec.tags, context, budget_chars),
        source, feedback, context=context, turn=turn, max_turns=max_turns, best_speedup=0.0,
    )
    obs.update(task_id=task_id, context=context, turn=int(turn), **extra)
    return obs


def chat_messages(observation: dict) -> list[dict[str, str]]:
    """``[system, user]`` chat messages of an observation (its ``messages``, else its ``prompt``)."""
    messages = observation.get("messages")
    if isinstance(messages, str) and messages:
        return json.loads(messages)
    if isinstance(messages, list):
        return messages
    return [{"role": "system", "content": env_obs.SYSTEM_PROMPT}, {"role": "user", "content": observation["prompt"]}]


def prompt_text(observation: dict) -> str:
    """The observation as one plain prompt (for models without a chat template)."""
    return env_obs.prompt_text(chat_messages(observation))


def parse_reply(current_source: str | None, reply: str) -> str:
    """Candidate source from a reply (fenced code, or SEARCH/REPLACE against ``current_source``).

    Raises ``hawkeye_env.edits.EditError`` with a message meant for the model.
    """
    return to_candidate(current_source or None, reply)
