"""veRL's multi-turn tool for the profile action (``hawkeye_env/adapters/verl_tool.py``), loaded the way
veRL's tool agent loop loads it (``initialize_tools_from_config`` on the documented tool config) and
called through its lifecycle (``create`` with the row's ``create_kwargs``, ``execute``, ``release``):
a module is profiled beside the expert (the sm_90 cross-compile's facts, the unit's metric, what needs
a GPU) with step reward 0, and a reply without code, a row without a task or an unknown task each get
a line saying so."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("verl.tools.base_tool", reason="veRL is not installed: pip install 'hawkeye-env[verl]'")

from verl.tools.tool_registry import initialize_tools_from_config  # noqa: E402

from hawkeye_env.adapters.verl import verl_rows  # noqa: E402
from hawkeye_env.adapters.verl_tool import TOOL_NAME, KernelProfileTool  # noqa: E402
from tests.adapters.conftest import SOLUTION, TASK, fenced  # noqa: E402

CONFIG = Path(__file__).resolve().parents[2] / "docs" / "examples" / "verl_profile_tool.yaml"


def _call(tool: KernelProfileTool, create_kwargs: dict, parameters: dict):
    """One tool call as veRL's ``ToolAgentLoop._call_tool`` makes it."""
    async def call():
        instance_id, _ = await tool.create(create_kwargs=create_kwargs)
        try:
            return await tool.execute(instance_id, parameters)
        finally:
            await tool.release(instance_id)
    return asyncio.run(call())


def test_the_tool_config_loads_the_profile_tool_and_rows_name_its_task():
    [tool] = initialize_tools_from_config(str(CONFIG))
    assert isinstance(tool, KernelProfileTool) and tool.name == TOOL_NAME
    assert tool.get_openai_tool_schema().function.parameters.required == ["source"]
    [row] = verl_rows([TASK], profile_tool=True)
    assert row["agent_name"] == "tool_agent"
    assert row["extra_info"]["tools_kwargs"] == {TOOL_NAME: {"create_kwargs": {"task": TASK}}}


def test_profile_kernel_profiles_a_module_and_says_why_it_cannot(small_profiles):
    [tool] = initialize_tools_from_config(str(CONFIG))
    task = {"task": TASK}
    response, reward, metrics = _call(tool, task, {"source": fenced(SOLUTION)})
    assert reward == 0.0 and metrics == {"profiled": True}
    assert "cross-compile for sm_90" in response.text and "- _add_kernel (1 launch)" in response.text
    assert "Not measured: duration" in response.text
    assert "coalesced_access, achieved_tbps (TB/s): needs a GPU" in response.text
    response, reward, metrics = _call(tool, task, {"source": "I would rather not"})
    assert response.text.startswith("Nothing to profile: no fenced code block") and metrics == {"profiled": False}
    response, _, metrics = _call(tool, {}, {"source": fenced(SOLUTION)})
    assert "the row names no task" in response.text and metrics == {"profiled": False}
    response, _, metrics = _call(tool, {"task": "no_such_task"}, {"source": fenced(SOLUTION)})
    assert "Profile unavailable: KeyError" in response.text and "unknown task" in response.text
    assert metrics == {"profiled": False}

