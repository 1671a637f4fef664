"""The env's profile action: ask for a profile of the current source instead of submitting new code.

With ``KernelOptEnv(allow_profile=True)`` an action whose text is the single word ``PROFILE`` (any
case, optionally in a fenced block) re-submits the current source, whose verdict comes from the
results store, and adds its kernels' profile to the feedback: per compiled kernel the registers,
spills, shared memory, theoretical occupancy and instruction mix (tensor-core instructions with
their types, global load and store widths, ``cp.async``, TMA), beside the expert solution's, the
task's speed of light, the metric of each unit the task's tags name beside the expert's
(``profiling/unit_metrics.py``) and, for a task whose precision is the point, both sources'
instruction evidence (``decide/instructions.py``). On CPU the kernels are cross-compiled for sm_90
(H100/H200) and the profile says which figures need a GPU (every unit metric among them); on a GPU
Nsight Compute adds duration, achieved occupancy, tensor and FMA pipe busy, DRAM and L2 throughput
and the L2 hit rate (``hawkeye_env.judge.parent.profiling``).

A profile step is a turn, and it is paid what re-submitting the current source pays (that source's
verdict and reward): asking for a profile can never earn more than submitting the same code again.
Example::

    env = gymnasium.make("hawkeye/KernelOpt-v3", tasks=["vector_add_fp32"], store=":memory:",
                         device="cpu", allow_profile=True)
    env.reset(seed=0, options={"task": "vector_add_fp32"})
    env.step(source)                                   # judged as usual
    obs, reward, *_ , info = env.step("PROFILE")       # info["profile"]["text"] is in obs["feedback"]
"""

from __future__ import annotations

import re

from hawkeye_env.judge.parent.profiling.run import profile_report

PROFILE_ACTION = "PROFILE"
_REQUEST = re.compile(r"^\s*(?:```[\w-]*\s*)?profile\s*(?:```)?\s*$", re.IGNORECASE)
# The reply-format option the prompt adds when the env accepts the action (``observation.py``).
REPLY_OPTION = f"""\
3. (only when a current source is shown) the single word {PROFILE_ACTION}: the current source is judged
   again (same verdict and reward) and the feedback adds its kernels' profile (registers, spills,
   shared memory, instruction mix; Nsight Compute counters on a GPU) beside the expert solution's."""
NOTHING_TO_PROFILE = f"{PROFILE_ACTION} profiles the current source, and there is none yet: submit a module first."


def is_profile_request(action: str) -> bool:
    """Whether ``action`` asks for a profile (module docstring)."""
    return bool(_REQUEST.match(action))


def profile_feedback(evaluator, task_id: str, source: str, device: str) -> tuple[str, dict]:
    """``(text, report)``: the profile of ``source`` and of the task's expert solution
    (``profile_report``); a profile that could not be made is a line saying why, never an error."""
    try:
        report = profile_report(evaluator, task_id, source, device)
    except Exception as exc:  # noqa: BLE001 - a profile is diagnostic: its failure never fails a step
        return f"Profile unavailable: {type(exc).__name__}: {exc}", {}
    return report["text"], report


__all__ = ["NOTHING_TO_PROFILE", "PROFILE_ACTION", "REPLY_OPTION", "is_profile_request", "profile_feedback"]
