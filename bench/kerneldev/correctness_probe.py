"""Correctness probe: each task's expert solution, its vendor baselines and its eager reference
against the float64 reference, under the judge's ``compare`` and the task's tolerance (CUDA only).

    python -m bench.kerneldev.correctness_probe attention_causal_bf16 simple_gla_fwd_bf16 > probe.jsonl

For every CPU shape and the smallest GPU shape, and every input distribution, it prints one JSON
line with each implementation's ``ok``, ``max_err_ratio``, ``rel_l2`` and failing element. When the
vendor libraries fail a tolerance too, the tolerance, not the expert, is what needs calibrating:
``ATTENTION_BF16`` and ``LINEAR_ATTENTION_BF16`` in ``hawkeye_env/tasks/spec.py`` cite such runs
(``bench/results/tolerances/correctness-diag-h200-2026-11-30.jsonl``). The solution and the baselines are
trusted repository code and run in this process.
"""

from __future__ import annotations

import importlib
import json
import sys
import time

import torch

from bench.provenance import provenance
from hawkeye_env.judge.parent.decide.correctness import compare, dtype_name
from hawkeye_env.judge.parent.decide.references import reference64
from hawkeye_env.judge.sandboxed.baseline.serve import resolve_vendor
from hawkeye_env.judge.shared.inputs import make_inputs, randomize_parameters
from hawkeye_env.tasks.registry import get_task, task_module


def _as_list(x) -> list:
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _check(spec, outs: list, refs: list, expected: list) -> list[dict]:
    return [compare(o, r, e, spec.tolerance(dtype_name(e)), "cuda") for o, r, e in zip(outs, refs, expected)]


def probe_case(task: str, shape: dict, dist: str, seed: int = 1) -> dict:
    """One shape and distribution: every implementation's comparison with the float64 reference."""
    spec = get_task(task)
    module = task_module(spec)
    init = module.get_init_inputs(**shape)
    torch.manual_seed(seed)
    ref = module.Model(*init)
    randomize_parameters(ref, dist, seed, "cuda")
    expert = importlib.import_module(spec.solution).ModelNew(*init)
    expert.load_state_dict(ref.state_dict(), strict=False)
    ref, expert = ref.cuda(), expert.cuda()
    inputs = make_inputs(module, shape, dist, seed, "cuda")
    expected = [o.dtype for o in _as_list(ref(*inputs))]
    refs = reference64(ref, inputs)
    row = {"task": task, "shape": shape, "dist": dist,
           "expert": _check(spec, _as_list(expert(*inputs)), refs, expected)}
    for name, target in spec.vendor_baselines.items():
        try:
            row[name] = _check(spec, _as_list(resolve_vendor(target)(ref, *inputs)), refs, expected)
        except Exception as exc:  # noqa: BLE001 - an unavailable baseline is reported, not fatal
            row[name] = f"{type(exc).__name__}: {str(exc)[:120]}"
    row["eager"] = _check(spec, _as_list(ref(*inputs)), refs, expected)
    return row


def main(argv: list[str]) -> int:
    if not argv or not torch.cuda.is_available():
        print("usage: python -m bench.kerneldev.correctness_probe TASK [TASK ...]  (needs a CUDA GPU)", file=sys.stderr)
        return 2
    torch.set_grad_enabled(False)
    print(json.dumps({"kind": "provenance", **provenance("cuda", __spec__.name, argv)}), flush=True)
    for task in argv:
        spec = get_task(task)
        smallest_gpu = min(spec.gpu_shapes, key=lambda g: spec.flops(**g))
        for shape in [dict(s) for s in spec.cpu_shapes] + [dict(smallest_gpu)]:
            for dist in spec.distributions:
                started = time.time()
                try:
                    row = probe_case(task, shape, dist)
                except Exception as exc:  # noqa: BLE001 - keep probing the other cases
                    row = {"task": task, "shape": shape, "dist": dist, "error": f"{type(exc).__name__}: {exc}"[:300]}
                row["s"] = round(time.time() - started, 2)
                print(json.dumps(row), flush=True)
                torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
