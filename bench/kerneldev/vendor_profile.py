"""Run a task's expert and one vendor baseline once each inside a profiler range, for Nsight Compute
to compare their kernels side by side. CUDA only.

    ncu --clock-control none --profile-from-start off --nvtx --print-nvtx-rename kernel \\
        --section SpeedOfLight --section ComputeWorkloadAnalysis --section Occupancy \\
        python -m bench.kerneldev.vendor_profile linear_prefill_bf16:cublas attention_causal_bf16:sdpa_cudnn

Run from the repository root. Each ``TASK:VENDOR`` pair is built by ``bench.kerneldev.launch_share``'s
runners (the judge's reference, inputs and vendor baselines at the task's first GPU shape, the
expert with the reference's parameters) and called three times to compile and warm up. Then, between
``cudaProfilerStart`` and ``cudaProfilerStop``, each expert and each vendor baseline is called once
inside an NVTX range named ``TASK:expert`` or ``TASK:VENDOR``, so the report names every kernel by
its owner. This explains a verdict's ratio (pipe utilization, occupancy, stalls); the ratio itself
comes from ``python -m bench.tasks``.
"""

from __future__ import annotations

import argparse
import sys

import torch

from bench.kerneldev.launch_share import runners
from hawkeye_env.tasks.registry import get_task

WARMUP_CALLS = 3  # first call compiles (Triton, torch.compile) and picks cuBLAS/cuDNN algorithms


def parse_pairs(items: list[str]) -> list[tuple[str, str]]:
    """``["task:vendor", ...]`` -> ``[(task, vendor), ...]``; raises ``ValueError`` for a malformed
    item, an unknown task or a vendor baseline the task does not declare."""
    pairs = []
    for item in items:
        task, sep, vendor = item.partition(":")
        if not sep or not task or not vendor:
            raise ValueError(f"{item!r}: expected TASK:VENDOR")
        spec = get_task(task)
        if vendor not in spec.vendor_baselines:
            raise ValueError(f"{task} declares no vendor baseline {vendor!r} (it has: "
                             f"{', '.join(spec.vendor_baselines) or 'none'})")
        pairs.append((task, vendor))
    return pairs


def prepare(pairs: list[tuple[str, str]], device: str = "cuda") -> list[tuple[str, str, dict, list]]:
    """``[(task, vendor, {"expert": fn, vendor: fn}, inputs)]``, each runner called ``WARMUP_CALLS``
    times; a vendor baseline that cannot run raises ``RuntimeError`` with its reason."""
    calls = []
    for task, vendor in pairs:
        fns, unavailable, inputs, _ = runners(task, device, vendors=[vendor])
        if vendor not in fns:
            raise RuntimeError(f"{task}:{vendor} cannot run here: {unavailable.get(vendor, 'unavailable')}")
        pair = {"expert": fns["expert"], vendor: fns[vendor]}
        with torch.no_grad():
            for _ in range(WARMUP_CALLS):
                for fn in pair.values():
                    fn(*inputs)
        calls.append((task, vendor, pair, inputs))
    return calls


def pairs_on_cuda(items: list[str], tool: str) -> list[tuple[str, str]] | None:
    """``parse_pairs(items)`` when a CUDA GPU is present; otherwise (or for a bad pair) the error on
    stderr, naming ``tool``, and None (the caller exits 2)."""
    try:
        pairs = parse_pairs(items)
    except (KeyError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None
    if not torch.cuda.is_available():
        print(f"error: {tool} runs kernels on a CUDA GPU; none is available", file=sys.stderr)
        return None
    return pairs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pairs", nargs="+", help="TASK:VENDOR, e.g. linear_prefill_bf16:cublas")
    args = parser.parse_args(argv)
    pairs = pairs_on_cuda(args.pairs, "vendor_profile")
    if pairs is None:
        return 2
    calls = prepare(pairs)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    with torch.no_grad():
        for task, _, pair, inputs in calls:
            for name, fn in pair.items():
                torch.cuda.nvtx.range_push(f"{task}:{name}")
                fn(*inputs)
                torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
    print("profiled", ", ".join(f"{task}:expert, {task}:{vendor}" for task, vendor, _, _ in calls))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
