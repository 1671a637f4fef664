"""``HawkeyeEnvClient``: the OpenEnv client of ``hawkeye serve`` (one WebSocket session, many episodes).

Async by OpenEnv's design; ``.sync()`` wraps it for blocking code. Example::

    from hawkeye_env.server.client import HawkeyeEnvClient
    from hawkeye_env.server.models import KernelAction

    with HawkeyeEnvClient(base_url="http://127.0.0.1:8000").sync() as env:
        result = env.reset(task="vector_add_fp32")
        messages = result.observation.messages            # [system, user] for the model
        result = env.step(KernelAction(reply=my_llm(messages)))
        result.reward, result.done, result.observation.verdict["stage"]

Server errors (a bad request, an unknown task) raise ``RuntimeError`` with the server's message.
"""

from __future__ import annotations

from typing import Any

from hawkeye_env.server import require_openenv

require_openenv()

from openenv.core.client_types import StepResult  # noqa: E402
from openenv.core.env_client import EnvClient  # noqa: E402

from hawkeye_env.server.models import KernelAction, KernelObservation, KernelState  # noqa: E402

#: Seconds to wait for one reply: a step waits for its verdict, which on CUDA includes a queue
#: behind other sessions' timed sections (the judge's default worker limit is 300 s).
DEFAULT_MESSAGE_TIMEOUT_S = 900.0


class HawkeyeEnvClient(EnvClient[KernelAction, KernelObservation, KernelState]):
    """OpenEnv ``EnvClient`` for ``KernelAction``/``KernelObservation``; see the module docstring."""

    def __init__(self, base_url: str, message_timeout_s: float = DEFAULT_MESSAGE_TIMEOUT_S, **kwargs):
        super().__init__(base_url, message_timeout_s=message_timeout_s, **kwargs)

    def _step_payload(self, action: KernelAction | str | dict) -> dict[str, Any]:
        """A ``KernelAction``, a reply string, or an action dict sent as it is (the server validates it)."""
        if isinstance(action, dict):
            return action
        if isinstance(action, str):
            action = KernelAction(reply=action)
        return action.model_dump(exclude_none=True, exclude={"metadata"})

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[KernelObservation]:
        obs = KernelObservation(**payload.get("observation", {}), reward=payload.get("reward"),
                                done=payload.get("done", False))
        return StepResult(observation=obs, reward=payload.get("reward"), done=bool(payload.get("done", False)))

    def _parse_state(self, payload: dict[str, Any]) -> KernelState:
        return KernelState(**payload)


__all__ = ["DEFAULT_MESSAGE_TIMEOUT_S", "HawkeyeEnvClient"]
