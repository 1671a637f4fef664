"""The replay's profile job: what a candidate's kernels are, from their machine code, and on a GPU how they ran.

A profile job (``{"kind": "profile", "task", "device", "plans", "shape", "seed", "counters"}``) holds
the parent's checked plan of one shape. ``kernel_facts`` reads each kernel's machine code
(``sass.py``): on CPU the kernels are checked source, cross-compiled for sm_90 in a child process
(``cross_compile.py``); on a GPU they are the plan's own cubins. With ``counters`` on a GPU, Nsight
Compute then profiles one replayed forward (``nsight.py``) under the exclusive lane, as a timed
section would run. Nothing here imports the candidate's module: the replay's rules hold.

The reply is a worker reply (``stage``, ``error``...) with ``kernels`` (one facts dict per compiled
kernel) and ``counters`` (``{"kernels": [...]}`` or ``{"unavailable": reason}``; on CPU the reason
that counters need a GPU).
"""

from __future__ import annotations

import json
import os
import time

from hawkeye_env.judge.sandboxed.replay import cross_compile, nsight
from hawkeye_env.judge.sandboxed.replay.sass import cubin_facts
from hawkeye_env.judge.shared.launch_plan import from_job
from hawkeye_env.judge.shared.source_kernels import is_source_kernel
from hawkeye_env.judge.shared.wire import ReplayJob, Reply

NEEDS_GPU = ("duration, achieved occupancy, pipe utilisation and DRAM/L2 throughput are measured by Nsight "
             "Compute on a GPU; none is present")


def _binary_facts(entry: dict, folder: str) -> list[dict]:
    """``sass.cubin_facts`` of each launched kernel of a GPU plan, with its launch count and Triton's
    metadata (warps, stages, dynamic shared memory)."""
    counts: dict[int, int] = {}
    for step in entry["plan"]["steps"]:
        if "launch" in step:
            counts[step["launch"]] = counts.get(step["launch"], 0) + 1
    out = []
    for i, n in sorted(counts.items()):
        k = entry["kernels"][i]
        meta = json.loads(k["metadata"])
        facts = cubin_facts(k["cubin"], folder, f"{k['name']}-{i}")
        facts.update(name=k["name"], launches=n, num_warps=meta.get("num_warps"), num_stages=meta.get("num_stages"),
                     shared_bytes=meta.get("shared"), ptx_mma=[])
        out.append(facts)
    return out


def kernel_facts(entry: dict, folder: str) -> list[dict]:
    """The facts of every kernel ``entry``'s plan launches (module docstring); ``RuntimeError`` when
    the cross-compile fails."""
    where = os.path.join(folder, "sm90")
    os.makedirs(where, exist_ok=True)
    if any(map(is_source_kernel, entry["kernels"])):
        return cross_compile.compile_plan(entry["kernels"], entry["plan"]["steps"], where)
    return _binary_facts(entry, where)


def instruction_facts(entry: dict, folder: str) -> dict:
    """``{"kernels": kernel_facts(...), "seconds": s}`` for a verdict's replay, or ``{"error": text}``
    when the kernels could not be read (the verdict then says the evidence is missing)."""
    started = time.monotonic()
    try:
        return {"kernels": kernel_facts(entry, folder), "seconds": time.monotonic() - started}
    except Exception as exc:  # noqa: BLE001 - evidence that cannot be read is reported, never fatal
        return {"error": f"{type(exc).__name__}: {exc}"[:2000]}


def _counters(job: ReplayJob, folder: str, lane) -> dict:
    import torch

    path = os.path.join(folder, "profile-job.pt")
    torch.save({"job": {**job, "kind": "replay", "trials": [], "timing": None}, "shape": job["shape"],
                "seed": job["seed"]}, path)
    lane("exclusive")
    try:
        return nsight.profile_plan(path, folder)
    finally:
        lane("none")


def run_profile(job: ReplayJob, lane=lambda mode: None) -> Reply:
    """The reply to a profile job (module docstring); never raises: a failed compile or an
    unreadable binary is a ``runtime_error`` with the reason."""
    reply: Reply = {"stage": "ok", "error": "", "violations": [], "trials": [], "timing": {}, "profile": {}}
    folder = job.get("workdir") or os.getcwd()
    started = time.monotonic()
    try:
        entry = from_job(job["plans"])[0]
        reply["kernels"] = kernel_facts(entry, folder)
        reply["profile"]["sass_s"] = time.monotonic() - started
        if job["device"] != "cuda":
            reply["counters"] = {"unavailable": NEEDS_GPU}
        elif job.get("counters"):
            counting = time.monotonic()
            reply["counters"] = _counters(job, folder, lane)
            reply["profile"]["counters_s"] = time.monotonic() - counting
        else:
            reply["counters"] = {"unavailable": "counters were not asked for"}
    except Exception as exc:  # noqa: BLE001 - the candidate's kernels not compiling is the profile's answer
        reply.update(stage="runtime_error", error=f"the kernels could not be profiled: {type(exc).__name__}: {exc}")
    return reply


__all__ = ["NEEDS_GPU", "instruction_facts", "kernel_facts", "run_profile"]
