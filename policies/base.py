"""The policy protocol every sampler in ``policies/`` implements, LLM or not.

A policy turns observations into action texts. An observation is a dict built by
``policies.prompts.make_observation`` (or the Gymnasium env) with at least:

- ``task_id``: the task id (``hawkeye tasks list``);
- ``prompt``: the full user message an LLM reads (task, contract, units, source, feedback, reply format);
- ``source``: the current candidate source ("" on the first turn);
- ``feedback``: the judge's feedback on the current source ("" on the first turn);
- ``turn``: 0 on the first turn;
- ``trajectory``: the trajectory its replies go to; at turn 0 one observation stands for ``n``
  trajectories, ``trajectory`` .. ``trajectory + n - 1`` (0 .. n - 1 unless a resumed eval asks
  for the samples it lacks).

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


def describe(policy: Policy) -> dict:
    """What a results file records of ``policy`` so a run can be reproduced and attributed: its
    ``name`` and whatever its optional ``describe()`` returns (model, endpoint, sampling
    parameters, seed: what decides its replies; never a key), else its ``seed`` when it has one.
    A resumed eval reuses a logged reply only under an equal description.

    Policies may also have an ``on_reply`` attribute (None by default): when an evaluation sets
    it to a function, the policy calls ``on_reply(observation, replies)`` with each observation's
    replies as soon as they arrive (replies it failed to get left out), so the evaluation can
    write them before the whole batch is back (``evals/samples.py``). It may be called from
    several threads at once.

    Example::

        from policies import make_policy
        describe(make_policy("search", seed=3))  # {'name': 'search', 'seed': 3, 'max_knobs': ...}
    """
    own = getattr(policy, "describe", None)
    record = dict(own()) if callable(own) else {"seed": getattr(policy, "seed", None)}
    return {"name": getattr(policy, "name", type(policy).__name__), **record}
