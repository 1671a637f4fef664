"""Fixtures shared by the unit tests: the interpreter's bf16 fix and NaN-poisoned allocations."""

from __future__ import annotations

import os

import pytest
import torch


@pytest.fixture(scope="session", autouse=True)
def bf16_interpreter():
    """Under ``TRITON_INTERPRET=1`` bf16 arithmetic and ``tl.dot`` need the CPU backend's fix
    (triton issue 11584); the judge's CPU workers install the same one."""
    if os.environ.get("TRITON_INTERPRET") == "1":
        from hawkeye_env.judge.sandboxed.common.interpreter.fixes import install_interpreter_fixes

        install_interpreter_fixes()


@pytest.fixture
def poisoned():
    """``torch.empty`` returns NaN (and integers their max), so an output element a kernel leaves
    unwritten fails the comparison."""
    saved = (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled(),
             torch.utils.deterministic.fill_uninitialized_memory)
    torch.use_deterministic_algorithms(True)
    torch.utils.deterministic.fill_uninitialized_memory = True
    yield
    torch.use_deterministic_algorithms(saved[0], warn_only=saved[1])
    torch.utils.deterministic.fill_uninitialized_memory = saved[2]
