"""How much of a task's timed call is host launch: the expert, its vendor baselines and the eager
reference, each timed as the judge times a call (host launch inside the CUDA events) and with the
launch hidden (``time_callable(hide_launch=True)``, the units harness's device time). CUDA only.

    python -m bench.kerneldev.launch_share rmsnorm_bf16 linear_decode_bf16 [...] [--out FILE]

Run from the repository root. Reference, inputs and baselines are built as the judge's worker
builds them (``hawkeye_env.judge.parent.baselines``) at the task's first GPU shape, the expert's parameters
loaded from the reference's state dict; 30 timed iterations (L2 flushed, inputs refilled), one retry
over CV 0.05. A ``copy`` row first: a 1 GiB device-to-device copy timed both
ways (``gbps`` counts bytes read and written). Then one JSON line per task: ``bytes`` and ``flops``
(the task's roofline counts), ``<runner>_ms`` with the launch inside and ``<runner>_hidden_ms``
without, for ``expert``, ``eager`` and every vendor baseline that runs (the others under
``unavailable`` with the reason); or ``error``. This diagnoses a task
score, it does not replace the judge's verdict (``python -m bench.tasks``).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys

import torch

from bench.provenance import provenance
from hawkeye_env.judge.sandboxed.baseline.serve import build, reference_and_inputs
from hawkeye_env.judge.sandboxed.common.timing import time_callable
from hawkeye_env.tasks.registry import get_task, task_module

ITERS, RETRIES, SEED = 30, 1, 0
COPY_BYTES = 1 << 30  # per buffer, 17x the H200's 60 MB L2 (bench.tasks' copy probe)


def _emit(row: dict, out) -> None:
    line = json.dumps(row)
    print(line, flush=True)
    if out is not None:
        out.write(line + "\n")


def runners(
    task_id: str, device: str = "cuda", vendors: list[str] | None = None
) -> tuple[dict, dict, list, dict]:
    """``({name: fn(*inputs)}, {name: reason}, inputs, shape)`` for ``task_id`` at its first GPU
    shape: the expert (with the reference's parameters), then the eager reference and the vendor
    baselines (all the task declares, or only ``vendors``) as the judge builds them
    (``baselines.build`` on ``baselines.reference_and_inputs``: the worker's seeds and parameter
    redraw); a vendor baseline that cannot run goes to the reasons."""
    spec = get_task(task_id)
    shape = dict(spec.gpu_shapes[0])
    ref, inputs = reference_and_inputs(spec, shape, SEED, device)
    expert = importlib.import_module(spec.solution).ModelNew(*task_module(spec).get_init_inputs(**shape))
    expert.load_state_dict(ref.state_dict(), strict=False)
    fns, unavailable = {"expert": expert.to(device)}, {}
    for name in ("eager", *(spec.vendor_baselines if vendors is None else vendors)):
        fn, reason = build(spec, name, ref, inputs)
        if fn is None:
            unavailable[name] = reason
        else:
            fns[name] = fn
    return fns, unavailable, inputs, shape


def measure(task_id: str) -> dict:
    spec = get_task(task_id)
    fns, unavailable, inputs, shape = runners(task_id)
    row = {"task": task_id, "shape": shape, "bytes": spec.bytes_moved(**shape), "flops": spec.flops(**shape)}
    if unavailable:
        row["unavailable"] = unavailable
    with torch.no_grad():
        for name, fn in fns.items():
            for hide in (False, True):
                t = time_callable(fn, inputs, ITERS, RETRIES, seed=SEED, keep=0, hide_launch=hide)
                row[f"{name}{'_hidden' if hide else ''}_ms"] = t["median_ms"]
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks", nargs="+", help="task ids")
    parser.add_argument("--out", default=None, help="also write the JSON lines to this file")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("error: launch_share times tasks on a CUDA GPU; none is available", file=sys.stderr)
        return 2
    for task_id in args.tasks:
        get_task(task_id)  # an unknown id fails before any timing
    out = open(args.out, "w", encoding="utf-8") if args.out else None
    try:
        _emit({"kind": "provenance", **provenance("cuda", __spec__.name, argv)}, out)
        src = torch.empty(COPY_BYTES // 4, dtype=torch.float32, device="cuda")
        dst = torch.empty_like(src)
        for hide in (False, True):
            t = time_callable(dst.copy_, [src], ITERS, RETRIES, seed=0, keep=0, hide_launch=hide)
            _emit({"task": "copy", "hide_launch": hide, "ms": t["median_ms"],
                   "gbps": 2 * COPY_BYTES / (t["median_ms"] * 1e-3) / 1e9}, out)
        del src, dst
        for task_id in args.tasks:
            try:
                _emit(measure(task_id), out)
            except Exception as exc:  # noqa: BLE001 - one task's failure is a row, the others still run
                _emit({"task": task_id, "error": f"{type(exc).__name__}: {exc}"[:300]}, out)
    finally:
        if out is not None:
            out.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
