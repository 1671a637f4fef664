"""Instruction evidence: whether a task's precision reached the tensor cores.

A task whose precision is the point (an FP8 GEMM, an FP4 GEMM) names the tensor-core operand types
its kernels must feed (``TaskSpec.mma_operands``). An answer that upcasts the fp8 operands to bf16
computes the same values within tolerance, so the outputs cannot tell it from an honest kernel;
its machine code can. The replay reads the machine code of the verdict's kernels (the GPU plan's
cubins, or on CPU a cross-compile of the checked source for sm_90: ``sandboxed/replay/sass.py``)
and ``evidence`` decides from their matrix instructions (``shared/mma_types.py``):

* passed: the kernels issue at least one matrix instruction, and every one of them takes only the
  task's operand types (an FP8 task's ``QGMMA.64x128x32.F32.E4M3.E4M3``);
* failed: no matrix instruction at all (the products run on the CUDA cores), or one whose operands
  are another type (``HGMMA.64x128x16.F32.BF16`` in an FP8 task: the bf16 shortcut);
* unknown: the machine code could not be read (a cross-compile that failed, the worker judged
  without the replay); no claim either way.

Counts are static (instructions in the code), so "every" is what makes a shortcut that keeps one
token fp8 instruction beside a bf16 main loop fail too. What the reward does with a failed
verdict is the reward's rule (``reward/score.py``: ``sol-v1`` pays its speed as untimed).
"""

from __future__ import annotations

from hawkeye_env.judge.parent.validate.facts_check import checked_facts
from hawkeye_env.judge.shared.mma_types import is_mma, mma_operands
from hawkeye_env.tasks.spec import TaskSpec


def _issued(kernels: list[dict]) -> dict[str, int]:
    """Every matrix instruction of ``kernels`` by opcode, summed over kernels."""
    out: dict[str, int] = {}
    for k in kernels:
        for op, n in (k.get("mma") or {}).items():
            if is_mma(op):
                out[op] = out.get(op, 0) + n
    return out


def evidence(spec: TaskSpec, instructions) -> dict:
    """The verdict's ``instructions`` field for ``spec`` from a replay's ``instructions`` reply
    (``{"kernels": [...], "seconds": s}`` or ``{"error": text}``; None when the replay read
    none): ``{"required", "passed" (True, False or None), "mma", "message", "seconds"}``, or
    ``{}`` for a task without ``mma_operands``."""
    if not spec.mma_operands:
        return {}
    required = list(spec.mma_operands)
    wanted = "/".join(required)
    out = {"required": required, "passed": None, "mma": {}, "seconds": 0.0}
    if not isinstance(instructions, dict) or "kernels" not in instructions:
        why = instructions.get("error", "") if isinstance(instructions, dict) else "the replay read no machine code"
        out["message"] = f"Instruction evidence unavailable ({str(why)[:300]}): no claim on the {wanted} MMAs."
        return out
    try:
        kernels = checked_facts(instructions["kernels"])
    except ValueError as exc:
        out["message"] = f"Instruction evidence unavailable (malformed facts: {exc})."
        return out
    seconds = instructions.get("seconds", 0.0)
    out["seconds"] = float(seconds) if isinstance(seconds, (int, float)) else 0.0
    issued = out["mma"] = _issued(kernels)
    shown = ", ".join(f"{op} x{n}" for op, n in sorted(issued.items())) or "none"
    other = sorted({t for op in issued for t in mma_operands(op) if t not in required})
    if not issued:
        fma = sum(k.get("fma", 0) or 0 for k in kernels)
        out["passed"] = False
        out["message"] = (f"Instruction evidence: the task's {wanted} operands never reach the tensor cores: the "
                          f"kernels issue no matrix instruction ({fma} FMA instructions on the CUDA cores).")
    elif other:
        out["passed"] = False
        out["message"] = (f"Instruction evidence: the tensor cores take {'/'.join(other)} operands, not the task's "
                          f"{wanted} ({shown}): the precision the task is about does not reach them.")
    else:
        out["passed"] = True
        out["message"] = f"Instruction evidence: the task's {wanted} operands reach the tensor cores ({shown})."
    return out


__all__ = ["evidence"]
