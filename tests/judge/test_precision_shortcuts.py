"""The deliberate FP4 shortcut (``tests/candidates/precision/nvfp4_fp32_fma.py``: NVFP4 decoded to
float32 and multiplied with float32 FMAs) through the judge's own processes on CPU: its forward is
recorded at a CPU shape, the trusted replay cross-compiles its kernel for sm_90, and the verdict's
instruction rule (``parent/decide/instructions.evidence``) flags it: no matrix instruction, FMAs on
the CUDA cores. The profile's unit rows show the same beside the expert's. Every precision expert
passing the same rule is measured by ``python -m bench.profile_evidence`` (BENCHMARKS.md, "The
profile action and instruction evidence"); one cross-compile of the large FP4 expert is too slow for
this suite."""

from __future__ import annotations

from pathlib import Path

from hawkeye_env.judge.parent.evaluator import Evaluator
from hawkeye_env.judge.parent.profiling import run
from hawkeye_env.judge.parent.profiling.unit_metrics import unit_metrics
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.tasks.registry import get_task

SHORTCUT = Path(__file__).resolve().parents[1] / "candidates" / "precision" / "nvfp4_fp32_fma.py"
TASK = "nvfp4_gemm_bf16"


def test_the_fp4_fma_shortcut_is_flagged_by_the_sm90_instruction_evidence(monkeypatch):
    monkeypatch.setattr(run, "CPU_RECORDING_BYTES", 0)  # record at the CPU shape: a fast test
    spec = get_task(TASK)
    p = run.profile_source(Evaluator(ResultStore(":memory:")), TASK, SHORTCUT.read_text(), "cpu")
    assert p.stage == "ok", p.error
    [kernel] = p.kernels
    assert kernel["name"] == "_fp4_fma_gemm" and kernel["mma"] == {} and kernel["fma"] > 0
    found = run.instruction_evidence(spec, {"candidate": p, "expert": None})["candidate"]
    assert found["passed"] is False and found["required"] == list(spec.mma_operands)
    assert "never reach the tensor cores" in found["message"] and f"{kernel['fma']} FMA" in found["message"]
    [mx, nv] = unit_metrics(spec, p, None)
    assert (mx["unit"], nv["unit"]) == ("mxfp4_gemm", "nvfp4_gemm")
    assert nv["static"]["candidate"]["matrix instructions"] == 0 and nv["candidate"] is None
