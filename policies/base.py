"""The policy protocol every sampler in ``policies/`` implements, LLM or not.

A policy turns observations into action texts. An observation is a dict built by
``policies.prompts.make_observation`` (or the Gymnasium env) with at least:

- ``task_id``: the task id (``hawkeye tasks list``);
- ``prompt``: the full user message an LLM reads (task, contract, units, source, feedback, reply format);
- ``source``: the current candidate source ("" on the first turn);
- ``feedback``: the judge's feedback on the current source ("" on the first turn);
- ``turn``: 0 on the first turn.

An action text is whatever a model would reply: a fenced ```python block defining ``ModelNew`` or
SEARCH/REPLACE blocks against ``source``; ``hawkeye_env.edits.to_candidate`` turns it into source.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class Policy(Protocol):
    """Samples ``n`` action texts per observation.

    ``sample`` returns one list per observation, in order, each holding exactly ``n`` strings. A
    policy never raises for a bad sample: a failed generation is an empty string, which the judge
    scores as ``no_source``.

    Example::

        from policies import make_policy
        policy = make_policy("search", seed=0)
        [[first, second]] = policy.sample([{"task_id": "vector_add_fp32", "prompt": "", "source": "",
                                            "feedback": "", "turn": 0}], n=2)
    """

    name: str

    def sample(self, observations: list[dict], n: int) -> list[list[str]]: ...
