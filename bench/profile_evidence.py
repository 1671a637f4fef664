"""Measure the profile action's cost and the instruction evidence on every precision task's expert.

    python -m bench.profile_evidence --device cpu [--profile-tasks vector_add_fp32 gemm_bf16 ...]
                                     [--repeats 2] [--out bench/results/profile/profile-cpu-DATE.json]

Two measurements, one JSON file (with ``bench.provenance`` and the host's load average, since on a
shared CPU every wall time depends on it):

* ``evidence``: every task with ``TaskSpec.mma_operands`` has its expert solution judged by the one
  ``Evaluator`` (seed 0), and each deliberate shortcut of ``SHORTCUTS`` too; per verdict its stage,
  whether the task's precision reached the tensor cores (``Verdict.instructions``), the matrix
  instructions read and the seconds the evidence cost (on CPU the sm_90 cross-compile in the replay).
  Every expert must pass and every shortcut must be flagged.
* ``profiles``: ``--repeats`` uncached profiles (``profiling.run.profile_source``) of each
  ``--profile-tasks`` expert, each step's seconds (recording worker, replay, cross-compile or binary
  read, Nsight Compute on a GPU) and each kernel's compile time, then one cached call.

BENCHMARKS.md renders both (areas ``profile-cost`` and ``instruction-evidence``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys
import time
from pathlib import Path

from bench.provenance import provenance
from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator, resolve_device
from hawkeye_env.judge.parent.profiling.run import profile_source
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.tasks.registry import get_task, list_tasks, solution_source

REPO = Path(__file__).resolve().parents[1]
# Deliberate shortcuts, task -> candidate files: correct answers whose kernels skip the task's precision.
SHORTCUTS = {"fp8_gemm_per_tensor": ("tests/candidates/precision/fp8_bf16_upcast.py",),
             "nvfp4_gemm_bf16": ("tests/candidates/precision/nvfp4_fp32_fma.py",)}
PROFILE_TASKS = ("vector_add_fp32", "softmax_fp32", "gemm_bf16", "fp8_gemm_per_tensor")


def evidence_row(ev: Evaluator, task: str, kind: str, name: str, source: str, device: str) -> dict:
    """One verdict's instruction evidence and cost."""
    v = ev.evaluate(task, source, device=device)
    found = v.instructions or {}
    return {"task": task, "kind": kind, "candidate": name, "stage": v.stage.value, "passed": found.get("passed"),
            "mma": found.get("mma", {}), "message": found.get("message", ""), "evidence_s": found.get("seconds"),
            "verdict_wall_s": v.wall_s}


def profile_rows(ev: Evaluator, task: str, device: str, repeats: int) -> dict:
    """``repeats`` uncached profiles of the task's expert, then one cached call."""
    source, calls = solution_source(get_task(task)), []
    for _ in range(repeats):
        p = profile_source(ev, task, source, device, use_cache=False)
        calls.append({"stage": p.stage, "error": p.error[:300], "seconds": p.seconds,
                      "kernels": [{"name": k["name"], "compile_s": k.get("compile_s"), "registers": k.get("registers"),
                                   "mma": k.get("mma", {})} for k in p.kernels]})
    started = time.monotonic()
    profile_source(ev, task, source, device)
    walls = [c["seconds"].get("wall", 0.0) for c in calls]
    return {"task": task, "shape": p.shape, "calls": calls, "wall_median_s": statistics.median(walls),
            "cached_call_s": time.monotonic() - started}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--profile-tasks", nargs="*", default=list(PROFILE_TASKS))
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    device = resolve_device(args.device)
    date = datetime.date.today().isoformat()
    kind = "cpu" if device == "cpu" else "gpu"
    out = args.out or REPO / "bench" / "results" / "profile" / f"profile-{kind}-{date}.json"
    report = {**provenance(device, "bench.profile_evidence", argv if argv is not None else sys.argv[1:]),
              "load_average_start": os.getloadavg(), "cpus": os.cpu_count(), "evidence": [], "profiles": []}
    ev = Evaluator(ResultStore(":memory:"), EvalConfig(seed=0, vendor_baselines=False))
    for spec in (s for s in list_tasks() if s.mma_operands):
        report["evidence"].append(evidence_row(ev, spec.id, "expert", "expert", solution_source(spec), device))
        for path in SHORTCUTS.get(spec.id, ()):
            report["evidence"].append(evidence_row(ev, spec.id, "shortcut", Path(path).stem,
                                                   (REPO / path).read_text(), device))
        print(json.dumps(report["evidence"][-1])[:300], flush=True)
    for task in args.profile_tasks:
        report["profiles"].append(profile_rows(ev, task, device, args.repeats))
        print(json.dumps(report["profiles"][-1])[:300], flush=True)
    report["load_average_end"] = os.getloadavg()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1, sort_keys=True))
    print(f"wrote {out}")
    return report


if __name__ == "__main__":
    main()
