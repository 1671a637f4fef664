"""Calibration of the error-concentration rule (``hawkeye_env/judge/parent/decide/structure.py``).

Runs every task's expert solution on its CPU shapes, each input distribution and ``--seeds``
seeds (the Triton interpreter on CPU, or ``--device cuda`` at the GPU shapes), compares each
output with ``correctness.compare`` against the parent's float64 and native references, and
prints the largest ``structure_score`` an honest output reached (fails above 1), per task and
overall, with the margin ``1 / max``. Then it seeds structured bugs into the expert's outputs
(one row, column, head, 64-element tile, 16x16 block off by ``bug_eps``, ``corrupt``) and
prints the smallest score each bug reached (caught by this rule above 1, whatever the other
rules say)::

    python -m bench.structure_calibration [--tasks a,b] [--seeds 2] [--device cpu]
"""

from __future__ import annotations

import argparse
import json
import os
import time

import torch

from bench.calibration_outputs import load_solution
from hawkeye_env.judge.parent.decide import correctness, references, structure
from hawkeye_env.tasks.registry import get_task, list_tasks, solution_source, task_module


def interpret_on_cpu() -> None:
    """Kernels under Triton's interpreter, bf16 arithmetic fixed as in the judge's workers."""
    os.environ["TRITON_INTERPRET"] = "1"
    try:
        from hawkeye_env.judge.sandboxed.common.interpreter.fixes import install_interpreter_fixes
    except ImportError:
        from hawkeye_env.judge.sandboxed.common.interpreter.cpu_backend import install_interpreter_fixes
    install_interpreter_fixes()


def expert_outputs(spec, module, shape: dict, dist: str, seed: int, device: str) -> tuple[list, list, list]:
    """``(outputs, float64 references, native references)`` of the expert on one trial."""
    ref, inputs = references.build(spec, shape, dist, seed, device)
    torch.manual_seed(seed)
    new = module.ModelNew(*task_module(spec).get_init_inputs(**shape))
    new.load_state_dict(ref.state_dict(), strict=False)
    new = new.to(device)
    with torch.no_grad():
        outs = references.as_list(new(*inputs))
    got64 = references.reference64(ref, inputs, keep_float64=spec.dtypes == ("float64",), host=False)
    return outs, got64, references.native_reference(ref, inputs)


def judge(spec, out, ref, nat, device: str) -> dict:
    dtype = correctness.dtype_name(nat.dtype)
    return correctness.compare(out, ref, nat.dtype, spec.tolerance(dtype), device, native=nat, label="output 0")


def corrupt(out: torch.Tensor, kind: str, eps: float) -> torch.Tensor | None:
    """``out`` with one structure (``kind``: row, column, head, tile, block) pushed away from zero
    by ``eps`` of each element's scale ``max(|x|, rms of its row)``; None when the output has no
    such structure."""
    x = out.to(torch.float64)
    s = x.shape
    sel = None
    if kind == "row" and x.dim() >= 2 and s[-2] >= 4:
        sel = (..., s[-2] // 2, slice(None))
    elif kind == "column" and x.dim() >= 2 and s[-1] >= 4:
        sel = (..., s[-1] // 3)
    elif kind == "head" and x.dim() == 4 and s[1] >= 2:
        sel = (slice(None), 1)
    elif kind == "tile" and s[-1] >= 2 * structure.TILE:
        sel = (..., slice(structure.TILE, 2 * structure.TILE))
    elif kind == "block" and x.dim() >= 2 and s[-1] >= 32 and s[-2] >= 32:
        sel = (..., slice(16, 32), slice(16, 32))
    if sel is None:
        return None
    scale = torch.maximum(x.abs(), x.pow(2).mean(dim=-1, keepdim=True).sqrt().expand_as(x))
    bumped = x + eps * torch.where(x < 0, -1.0, 1.0) * scale
    x[sel] = bumped[sel]
    return x.to(out.dtype)


def bug_eps(spec, dtype: torch.dtype) -> float:
    """The seeded bug's size: 5x the element ``rtol`` of the output's dtype, between 1% and 10%."""
    return min(0.1, max(0.01, 5 * spec.tolerance(correctness.dtype_name(dtype)).rtol))


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tasks", default="")
    p.add_argument("--seeds", type=int, default=2)
    p.add_argument("--device", default="cpu")
    args = p.parse_args(argv)
    if args.device == "cpu":
        interpret_on_cpu()
    specs = [get_task(t) for t in args.tasks.split(",")] if args.tasks else list_tasks()
    report = {"thresholds": {"floor": structure.FLOOR, "ratio": structure.RATIO},
              "honest": {}, "bugs": {}}
    for spec in specs:
        if not spec.solution or not spec.shapes(args.device):
            continue
        start = time.monotonic()
        module = load_solution(solution_source(spec), f"calib_{spec.id}")
        worst, bugs = 0.0, {}
        for shape in spec.shapes(args.device):
            for dist in spec.distributions:
                for seed in range(args.seeds):
                    outs, refs, nats = expert_outputs(spec, module, dict(shape), dist, seed, args.device)
                    for o, r, n in zip(outs, refs, nats):
                        c = judge(spec, o, r, n, args.device)
                        worst = max(worst, float(c["structure_score"]))
                        if not c["ok"]:
                            print(f"  {spec.id} {dict(shape)} {dist} {seed}: honest FAILS: {c['reason']}")
                    o, r, n = outs[0], refs[0], nats[0]
                    for kind in ("row", "column", "head", "tile", "block"):
                        bad = corrupt(o, kind, bug_eps(spec, n.dtype))
                        if bad is None:
                            continue
                        c = judge(spec, bad, r, n, args.device)
                        bugs[kind] = min(bugs.get(kind, float("inf")), float(c["structure_score"]))
        report["honest"][spec.id] = worst
        report["bugs"][spec.id] = bugs
        print(f"{spec.id}: honest max {worst:.3f}; bugs (eps {bug_eps(spec, nats[0].dtype):.3g}) min "
              + ", ".join(f"{k} {v:.2f}" for k, v in bugs.items()) + f" [{time.monotonic() - start:.0f}s]", flush=True)
    overall = max(report["honest"].values(), default=0.0)
    report["honest_max"] = overall
    report["margin"] = 1.0 / overall if overall else float("inf")
    print(json.dumps({"honest_max": overall, "margin": report["margin"], **report["thresholds"]}))
    return report


if __name__ == "__main__":
    main()
