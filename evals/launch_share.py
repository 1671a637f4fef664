"""How much of a task's timed call is host launch: the expert, its vendor baselines and the eager
reference, each timed as the judge times a call (host launch inside the CUDA events) and with the
launch hidden (``time_callable(hide_launch=True)``, the units harness's device time). CUDA only.

    python -m evals.launch_share rmsnorm_bf16 linear_decode_bf16 [...] [--out FILE]

Run from the repository root. Inputs are the task's ``get_inputs`` at its first GPU shape, the
expert's parameters loaded from the reference's state dict, 30 timed iterations (L2 flushed, inputs
refilled), one retry over CV 0.05. A ``copy`` row first: a 1 GiB device-to-device copy timed both
ways (``gbps`` counts bytes read and written). Then one JSON line per task: ``bytes`` and ``flops``
(the task's roofline counts), ``<runner>_ms`` with the launch inside and ``<runner>_hidden_ms``
without, for ``expert``, ``eager`` and every vendor baseline; or ``error``. This diagnoses a task
score, it does not replace the judge's verdict (``python -m evals.bench_tasks``).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys

import torch

from hawkeye_env.judge.timing import time_callable
from hawkeye_env.tasks.registry import get_task, task_module

ITERS, RETRIES = 30, 1
COPY_BYTES = 1 << 30  # per buffer, 17x the H200's 60 MB L2 (evals.bench_tasks' copy probe)


def _emit(row: dict, out) -> None:
    line = json.dumps(row)
    print(line, flush=True)
    if out is not None:
        out.write(line + "\n")


def runners(task_id: str) -> tuple[dict, list, dict]:
    """``({name: fn(*inputs)}, inputs, shape)`` for the expert, the eager reference and the vendor
    baselines of ``task_id`` at its first GPU shape, on CUDA."""
    spec = get_task(task_id)
    mod = task_module(spec)
    shape = dict(spec.gpu_shapes[0])
    init = mod.get_init_inputs(**shape)
    torch.manual_seed(0)
    ref = mod.Model(*init).cuda()
    expert = importlib.import_module(spec.solution).ModelNew(*init).cuda()
    expert.load_state_dict(ref.state_dict(), strict=False)
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in mod.get_inputs(**shape)]
    fns = {"expert": expert, "eager": ref}
    for name, path in spec.vendor_baselines.items():
        module, _, attr = path.partition(":")
        fn = getattr(importlib.import_module(module), attr)
        fns[name] = lambda *xs, _fn=fn: _fn(ref, *xs)
    return fns, inputs, shape


def measure(task_id: str) -> dict:
    spec = get_task(task_id)
    fns, inputs, shape = runners(task_id)
    row = {"task": task_id, "shape": shape, "bytes": spec.bytes_moved(**shape), "flops": spec.flops(**shape)}
    with torch.no_grad():
        for name, fn in fns.items():
            for hide in (False, True):
                t = time_callable(fn, inputs, ITERS, RETRIES, seed=0, keep=0, hide_launch=hide)
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
