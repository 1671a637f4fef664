"""The units harness (``units.lib.harness``) under the judge's rules, and the child process that runs it.

::

    python -m hawkeye_env.units_verify --cpu [NAMES] [--json]   # solution, naive, reference vs float64
    python -m hawkeye_env.units_verify --gpu [NAMES] [--json]   # time solution and naive at the first GPU shape

``JUDGE_CHECKS`` holds a unit to what a task's candidate is held to: ``correctness.compare`` with
``DEFAULT_TOLERANCES`` for the reference's dtype, and ``timing.time_callable`` (warm-up, fresh
inputs, L2 flush, CV gate) with ``hide_launch`` and ``EvalConfig``'s default iterations and retries,
so unit and task timings agree. The harness itself imports nothing of the judge: the units sit
below it in the layer order. ``hawkeye units verify`` and the env's unit-metric feedback call
``verify_in_subprocess``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import torch

from hawkeye_env.judge.parent.decide.correctness import compare, dtype_name
from hawkeye_env.judge.parent.eval_config import EvalConfig
from hawkeye_env.judge.sandboxed.common.timing import time_callable
from hawkeye_env.tasks.spec import DEFAULT_TOLERANCES
from units.lib import harness
from units.lib.index import UNITS_DIR

MODULE = "hawkeye_env.units_verify"  # the child process's module, also when this file runs as __main__
PROG = f"python -m {MODULE}"


def judge_compare(out: torch.Tensor, ref64: torch.Tensor, like: torch.dtype, device: str) -> dict:
    """``correctness.compare`` of ``out`` with the float64 ``ref64`` at ``DEFAULT_TOLERANCES`` for
    dtype ``like``, computed on ``device``; returns ``{"ok", "reason", "max_err_ratio", "rel_l2", ...}``."""
    return compare(out, ref64, like, DEFAULT_TOLERANCES[dtype_name(like)], compute_device=device)


def judge_time(fn, inputs: list) -> dict:
    """``time_callable`` of ``fn(*inputs)`` with the host launch hidden, ``EvalConfig``'s default
    iterations and retries, seed 0, no outputs kept; returns its dict (``median_ms``, ``cv``, ...)."""
    return time_callable(fn, inputs, iters=EvalConfig.iters, retries=EvalConfig.retries, seed=0, keep=0,
                         hide_launch=True)


def install_judge_interpreter_fixes() -> None:
    """The judge's CPU workers' Triton interpreter fixes (bf16 arithmetic, ``tl.dot``); imported
    here, not at module level, so Triton loads after ``main`` has set ``TRITON_INTERPRET``."""
    from hawkeye_env.judge.sandboxed.common.interpreter.fixes import install_interpreter_fixes

    install_interpreter_fixes()


JUDGE_CHECKS = harness.Checks(compare=judge_compare, time=judge_time,
                              prepare_interpreter=install_judge_interpreter_fixes)


def verify_in_subprocess(names=(), device: str = "cpu", candidate: str | None = None, runner=None) -> list[dict]:
    """``python -m hawkeye_env.units_verify`` in a fresh process (the interpreter on CPU); parsed JSON.

    With ``candidate`` (a file path) the candidate's code runs only in that process: the caller
    reads numbers back, never imports it. ``runner(cmd, env, timeout_s)`` starts the process and
    returns its ``subprocess.CompletedProcess`` (text mode); the CLI passes the judge's OS
    sandbox (``hawkeye_env.judge.parent.launch.spawn.run_command``) whenever a candidate is given.
    """
    env = dict(os.environ, TRITON_INTERPRET="1") if device == "cpu" else dict(os.environ)
    cmd = [sys.executable, "-m", MODULE, f"--{device}", *names, "--json"]
    if candidate:
        cmd += ["--candidate", str(candidate)]
    if runner is not None:
        proc = runner(cmd, env, harness.SUBPROCESS_TIMEOUT_S)
    else:
        proc = subprocess.run(cmd, cwd=UNITS_DIR.parent, env=env, capture_output=True, text=True,
                              timeout=harness.SUBPROCESS_TIMEOUT_S)
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr[-2000:]}") from None


def verify_cpu_in_subprocess(names=()) -> list[dict]:
    """``check_unit_cpu`` for ``names`` (all runnable units if empty) in a fresh interpreter process."""
    return verify_in_subprocess(names, "cpu")


def main(argv: list[str] | None = None) -> int:
    """``units.lib.harness.main`` under ``JUDGE_CHECKS``."""
    return harness.main(argv, JUDGE_CHECKS, PROG)


if __name__ == "__main__":
    sys.exit(main())
