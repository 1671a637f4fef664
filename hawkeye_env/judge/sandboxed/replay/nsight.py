"""Nsight Compute on a replayed plan: the counters a profile reports on a GPU.

The replay writes the checked job to a file and starts ``ncu --csv`` on
``python -m hawkeye_env.judge.sandboxed.replay.nsight_target FILE``, which rebuilds the plan's runner
(``replay.plan_runner``: the plan's cubins, no candidate Python), calls it once to warm up and once
between ``cudaProfilerStart`` and ``cudaProfilerStop`` (``--profile-from-start off``), so Nsight
Compute measures each kernel of exactly one forward at the task's timed shape. Clocks are left
free (``--clock-control none``), as the judge's timing leaves them; caches are flushed between
the profiler's replay passes (its default). The run is bounded by ``NCU_TIMEOUT_S`` and its
kernel count by ``MAX_PROFILED_KERNELS``.

``METRICS`` maps what a profile reports to Nsight Compute's metric names (Hopper, ncu 2024+):
duration, achieved occupancy, tensor-pipe and FMA-pipe busy, DRAM and L2 throughput as a share
of peak, and the L2 hit rate. When the GPU cannot be profiled (no ``ncu``, counters restricted to
administrators: ``ERR_NVGPUCTRPERM``, or the run fails), ``profile_plan`` says why instead.
"""

from __future__ import annotations

import csv
import glob
import io
import os
import shutil
import subprocess
import sys

METRICS = {
    "duration_us": "gpu__time_duration.sum",
    "achieved_occupancy_pct": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "tensor_pipe_pct": "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "fma_pipe_pct": "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "dram_throughput_pct": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "l2_throughput_pct": "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "l2_hit_rate_pct": "lts__t_sector_hit_rate.pct",
}
# Nsight Compute replays each kernel for every pass its metrics need (7 metrics: a few passes per
# kernel); a forward of at most this many kernels is profiled, so one profile's GPU time stays bounded.
MAX_PROFILED_KERNELS = 16
# The whole ncu run (start-up, the warm-up call, each kernel's passes) gets this long.
NCU_TIMEOUT_S = 180
# Where Nsight Compute is installed when it is not on PATH.
NCU_PLACES = ("/usr/local/cuda/bin/ncu", "/opt/nvidia/nsight-compute/*/ncu", "/usr/local/cuda*/nsight-compute*/ncu")
_NANOSECOND_UNITS = {"nsecond": 1e-3, "usecond": 1.0, "msecond": 1e3, "second": 1e6}


def find_ncu() -> str | None:
    """The ``ncu`` executable on PATH or in ``NCU_PLACES``, or None."""
    found = shutil.which("ncu")
    if found:
        return found
    for pattern in NCU_PLACES:
        for path in sorted(glob.glob(pattern), reverse=True):
            if os.access(path, os.X_OK):
                return path
    return None


def ncu_command(ncu: str, job_path: str) -> list[str]:
    """The ``ncu`` command line that profiles one call of the plan in ``job_path``."""
    return [ncu, "--csv", "--print-units", "base", "--clock-control", "none", "--profile-from-start", "off",
            "--launch-count", str(MAX_PROFILED_KERNELS), "--metrics", ",".join(METRICS.values()),
            sys.executable, "-m", "hawkeye_env.judge.sandboxed.replay.nsight_target", job_path]


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def parse_csv(text: str) -> list[dict]:
    """Per profiled kernel, in launch order: ``{"name", **METRICS keys}`` from ``ncu --csv`` output
    (lines before the CSV header, such as ``==PROF==`` notes, are skipped)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        return []
    by_name = {metric: key for key, metric in METRICS.items()}
    kernels: dict[str, dict] = {}
    for row in csv.DictReader(io.StringIO("\n".join(lines[start:]))):
        key = by_name.get(row.get("Metric Name", ""))
        if key is None:
            continue
        entry = kernels.setdefault(row["ID"], {"name": row.get("Kernel Name", "?")})
        value = _number(row.get("Metric Value", ""))
        if value is not None and key == "duration_us":
            value *= _NANOSECOND_UNITS.get(row.get("Metric Unit", "nsecond"), 1e-3)
        entry[key] = value
    return [kernels[k] for k in sorted(kernels, key=lambda x: int(x) if x.isdigit() else 0)]


def unavailable_reason(returncode: int, output: str) -> str:
    """Why an ``ncu`` run gave no counters, in words an agent can act on."""
    if "ERR_NVGPUCTRPERM" in output:
        return ("the GPU's performance counters are restricted to administrators here (ERR_NVGPUCTRPERM): "
                "Nsight Compute cannot profile in the sandbox")
    tail = " ".join(output.strip().splitlines()[-3:])[-400:]
    return f"Nsight Compute exited with {returncode}: {tail or 'no output'}"


def profile_plan(job_path: str, folder: str, timeout_s: float = NCU_TIMEOUT_S) -> dict:
    """``{"kernels": parse_csv(...)}`` for one call of the plan in ``job_path``, or
    ``{"unavailable": reason}`` when the GPU cannot be profiled (module docstring)."""
    ncu = find_ncu()
    if ncu is None:
        return {"unavailable": "Nsight Compute (ncu) is not installed on this machine"}
    try:
        proc = subprocess.run(ncu_command(ncu, job_path), capture_output=True, text=True, timeout=timeout_s,
                              cwd=folder)
    except subprocess.TimeoutExpired:
        return {"unavailable": f"Nsight Compute ran past {timeout_s:.0f} s"}
    kernels = parse_csv(proc.stdout)
    if proc.returncode != 0 or not kernels:
        return {"unavailable": unavailable_reason(proc.returncode, proc.stdout + "\n" + proc.stderr)}
    return {"kernels": kernels}


__all__ = ["MAX_PROFILED_KERNELS", "METRICS", "NCU_TIMEOUT_S", "find_ncu", "ncu_command", "parse_csv",
           "profile_plan", "unavailable_reason"]
