"""veRL: the profile action as a tool of veRL's multi-turn rollouts (``KernelProfileTool``).

veRL's reward interface (``verl.py``: ``compute_score``) sees one finished response and has no
action; its multi-turn rollouts (the tool agent loop, ``agent_name: tool_agent``) call tools
declared in a tool config, each a ``verl.tools.base_tool.BaseTool`` with ``create``, ``execute``,
``release``. ``KernelProfileTool`` is that tool for the env's profile action: ``profile_kernel``
takes the candidate module (``source``, fenced or bare) and returns its kernels' profile on the
rollout's task beside the expert solution's (``common.profile_reply``, the env's one profile
function: on CPU the sm_90 cross-compile's facts and what needs a GPU, on a GPU Nsight Compute's
counters too), with step reward 0: a profile earns nothing; the response's reward stays
``compute_score``'s. The task comes from the row's ``extra_info.tools_kwargs.profile_kernel.
create_kwargs.task`` (``verl_rows(..., profile_tool=True)`` writes it). A source that does not
build, a reply without code or a row without a task is answered with a line saying so, never an
error. Needs veRL (``INSTALL_HINT``). Config (``docs/examples/verl_profile_tool.yaml``)::

    actor_rollout_ref.rollout.multi_turn.enable=true \\
    actor_rollout_ref.rollout.multi_turn.tool_config_path=docs/examples/verl_profile_tool.yaml
"""

from __future__ import annotations

import asyncio
from typing import Any

from hawkeye_env.adapters.common import profile_reply
from hawkeye_env.adapters.verl import INSTALL_HINT

TOOL_NAME = "profile_kernel"

try:
    from verl.tools.base_tool import BaseTool
    from verl.tools.schemas import OpenAIFunctionToolSchema, ToolResponse
except ImportError as exc:
    raise ImportError(INSTALL_HINT) from exc

SCHEMA = {
    "type": "function",
    "function": {
        "name": TOOL_NAME,
        "description": ("Profile a candidate kernel module without submitting it: registers, spills, shared "
                        "memory and instruction mix of each compiled kernel beside the expert solution's, the "
                        "task's speed of light and its units' metrics (Nsight Compute counters on a GPU)."),
        "parameters": {"type": "object", "required": ["source"], "properties": {
            "source": {"type": "string",
                       "description": "The whole module defining class ModelNew, in a ```python fenced block."}}},
    },
}


class KernelProfileTool(BaseTool):
    """The ``profile_kernel`` tool (module docstring); one instance serves every rollout."""

    def __init__(self, config: dict | None = None, tool_schema: OpenAIFunctionToolSchema | None = None):
        super().__init__(config or {}, tool_schema or OpenAIFunctionToolSchema.model_validate(SCHEMA))
        self._tasks: dict[str, str] = {}

    async def create(self, instance_id: str | None = None, **kwargs) -> tuple[str, ToolResponse]:
        """An instance for one call; ``create_kwargs["task"]`` names the rollout's task."""
        instance_id, response = await super().create(instance_id)
        self._tasks[instance_id] = (kwargs.get("create_kwargs") or {}).get("task", "")
        return instance_id, response

    async def execute(self, instance_id: str, parameters: dict[str, Any], **kwargs) -> tuple[ToolResponse, float, dict]:
        """``(profile text, 0.0, {"profiled": whether the source's kernels were profiled})``."""
        task = self._tasks.get(instance_id, "")
        if not task:
            return ToolResponse(text="Nothing to profile: the row names no task (tools_kwargs."
                                     f"{TOOL_NAME}.create_kwargs.task)."), 0.0, {"profiled": False}
        text, report = await asyncio.to_thread(profile_reply, task, parameters.get("source", ""))
        return ToolResponse(text=text), 0.0, {"profiled": (report.get("candidate") or {}).get("stage") == "ok"}

    async def release(self, instance_id: str, **kwargs) -> None:
        self._tasks.pop(instance_id, None)


__all__ = ["SCHEMA", "TOOL_NAME", "KernelProfileTool"]
