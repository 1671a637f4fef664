"""Calibration of the error-concentration rule (``hawkeye_env/judge/parent/decide/structure.py``)
and of the recurring-error rule (``hawkeye_env/judge/parent/decide/recurrence.py``).

Runs every task's expert solution on its CPU shapes, each input distribution and ``--seeds``
seeds (the Triton interpreter on CPU, or ``--device cuda`` at the GPU shapes), compares each
output with ``correctness.compare`` against the parent's float64 and native references, and
prints the largest ``structure_score`` an honest output reached (fails above 1), per task and
overall, with the margin ``1 / max``. Then it seeds structured bugs into the expert's outputs
(one row, column, head, 64-element tile, 16x16 block off by ``bug_eps``, ``corrupt``) and
prints the smallest score each bug reached (caught by this rule above 1, whatever the other
rules say).

For the recurring-error rule it also runs the extra value distributions, keeps each call's
over-bound elements (``over_bound``) per shape and output, of the expert and of the native
reference judged as a candidate, and prints the largest ``recurrence`` score their calls on
different inputs reached together; then it seeds a fixed scattered index set (``scatter``: every
element whose flat index is 1030 modulo 1031, off by ``bug_eps``) into every call's expert output
and prints its score over all calls of a shape (at shapes holding at least ``MIN_COINCIDENCES``
seeded elements) and the smallest over any two calls of the task's public distributions (a
verdict's fewest at one shape) in which at least ``MIN_COINCIDENCES`` elements are over their
bound::

    python -m bench.structure_calibration [--tasks a,b] [--seeds 2] [--device cpu] [--json PATH]

``--json`` writes the figures with the run's provenance (``bench.provenance``) in the schema of
``bench/results/structure-calibration/`` (one run; no judged candidates).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import time
from pathlib import Path

import torch

from bench.calibration_outputs import load_solution
from bench.provenance import provenance
from hawkeye_env.judge.parent.decide import correctness, recurrence, references, structure
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
    x[sel] = _bumped(x, eps)[sel]
    return x.to(out.dtype)


def _bumped(x: torch.Tensor, eps: float) -> torch.Tensor:
    """``x`` (float64) with every element pushed away from zero by ``eps`` of its scale
    ``max(|x|, rms of its row)``."""
    scale = torch.maximum(x.abs(), x.pow(2).mean(dim=-1, keepdim=True).sqrt().expand_as(x))
    return x + eps * torch.where(x < 0, -1.0, 1.0) * scale


# The seeded fixed index set: every element whose flat index is SCATTER - 1 modulo SCATTER (under
# 0.1% of the elements, one per row at most where rows are longer than SCATTER).
SCATTER = 1031


def scatter(out: torch.Tensor, eps: float) -> torch.Tensor | None:
    """``out`` with the fixed index set ``SCATTER`` defines pushed away from zero by ``eps`` of
    each element's scale, as ``corrupt`` does; None when the output holds none of it."""
    x = out.to(torch.float64)
    if x.numel() < SCATTER:
        return None
    at = torch.arange(SCATTER - 1, x.numel(), SCATTER)
    flat = x.reshape(-1)
    flat[at] = _bumped(x, eps).reshape(-1)[at]
    return x.to(out.dtype)


def bug_eps(spec, dtype: torch.dtype) -> float:
    """The seeded bug's size: 5x the element ``rtol`` of the output's dtype, between 1% and 10%."""
    return min(0.1, max(0.01, 5 * spec.tolerance(correctness.dtype_name(dtype)).rtol))


def _trial(spec, module, shape: dict, dist: str, seed: int, device: str, calls: dict, bugs: dict) -> float:
    """Judge one expert trial: its outputs' largest structure score (the public distributions'
    seeded structured bugs' scores into ``bugs``) and, per output, the over-bound elements of
    the expert, of the native reference and of the seeded index set into ``calls``."""
    outs, refs, nats = expert_outputs(spec, module, shape, dist, seed, device)
    worst, public = 0.0, dist in spec.distributions
    for i, (o, r, n) in enumerate(zip(outs, refs, nats)):
        c = judge(spec, o, r, n, device)
        if public:
            worst = max(worst, float(c["structure_score"]))
        if not c["ok"]:
            print(f"  {spec.id} {shape} {dist} {seed}: honest FAILS: {c['reason']}")
        for who, x in (("expert", o), ("native", n), ("seeded", scatter(o, bug_eps(spec, n.dtype)))):
            got = judge(spec, x, r, n, device) if x is not None else {}
            if "over_bound" in got:
                calls.setdefault((who, tuple(shape.items()), i), []).append((dist, got["over_bound"], o.numel()))
    o, r, n = outs[0], refs[0], nats[0]
    for kind in ("row", "column", "head", "tile", "block") if public else ():
        bad = corrupt(o, kind, bug_eps(spec, n.dtype))
        if bad is not None:
            bugs[kind] = min(bugs.get(kind, float("inf")), float(judge(spec, bad, r, n, device)["structure_score"]))
    return worst


def recurrence_figures(spec, calls: dict) -> dict:
    """``{"honest_max", "honest_coincidences", "seeded_all_calls", "seeded_min_pair",
    "seeded_pairs_caught"}`` from ``_trial``'s ``calls``: the largest score of the expert's and
    the native's calls together per shape and output; the seeded set's smallest score over all
    calls of a shape (at shapes holding ``MIN_COINCIDENCES`` seeded elements or more), and over
    any two calls of the public distributions in each of which at least ``MIN_COINCIDENCES``
    elements are over their bound (a seeded error within the bound is no wrong element), with
    the share of all such pairs that fail."""
    got = {"honest_max": 0.0, "honest_coincidences": 0, "seeded_all_calls": None, "seeded_min_pair": None,
           "seeded_pairs_caught": None}
    caught, pairs = 0, 0
    for (who, _, _), drawn in calls.items():
        sets, numel = [x for _, x, _ in drawn], drawn[0][2]
        found = recurrence.recurring(sets, numel)
        if who != "seeded":
            got["honest_max"] = max(got["honest_max"], found.score if found else 0.0)
            got["honest_coincidences"] = max(got["honest_coincidences"], found.coincidences if found else 0)
            continue
        if numel // SCATTER < recurrence.MIN_COINCIDENCES or found is None:
            continue
        got["seeded_all_calls"] = _least(got["seeded_all_calls"], found.score)
        wrong = [x for x in drawn if x[1].numel() >= recurrence.MIN_COINCIDENCES]
        for a, b in itertools.combinations(wrong, 2):
            score = recurrence.recurring([a[1], b[1]], numel).score
            caught, pairs = caught + (score >= 1.0), pairs + 1
            if a[0] in spec.distributions and b[0] in spec.distributions:
                got["seeded_min_pair"] = _least(got["seeded_min_pair"], score)
    got["seeded_pairs_caught"] = caught / pairs if pairs else None
    return got


def _least(a: float | None, b: float) -> float:
    return b if a is None else min(a, b)


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tasks", default="")
    p.add_argument("--seeds", type=int, default=2)
    p.add_argument("--device", default="cpu")
    p.add_argument("--json", default="", help="write the figures here (bench/results/structure-calibration/)")
    args = p.parse_args(argv)
    if args.device == "cpu":
        interpret_on_cpu()
    specs = [get_task(t) for t in args.tasks.split(",")] if args.tasks else list_tasks()
    report = {"thresholds": {"floor": structure.FLOOR, "ratio": structure.RATIO,
                             "min_coincidences": recurrence.MIN_COINCIDENCES, "recurrence_ratio": recurrence.RATIO},
              "honest": {}, "bugs": {}, "recurrence": {}}
    for spec in specs:
        if not spec.solution or not spec.shapes(args.device):
            continue
        start = time.monotonic()
        module = load_solution(solution_source(spec), f"calib_{spec.id}")
        worst, bugs, calls = 0.0, {}, {}
        for shape in spec.shapes(args.device):
            for dist in (*spec.distributions, *spec.extra_distributions()):
                for seed in range(args.seeds):
                    worst = max(worst, _trial(spec, module, dict(shape), dist, seed, args.device, calls, bugs))
        report["honest"][spec.id], report["bugs"][spec.id] = worst, bugs
        rec = report["recurrence"][spec.id] = recurrence_figures(spec, calls)
        print(f"{spec.id}: honest max {worst:.3f}; bugs min " + ", ".join(f"{k} {v:.2f}" for k, v in bugs.items())
              + f"; recurrence {json.dumps(rec)} [{time.monotonic() - start:.0f}s]", flush=True)
    overall = max(report["honest"].values(), default=0.0)
    report["honest_max"] = overall
    report["margin"] = 1.0 / overall if overall else float("inf")
    rec = report["recurrence"].values()
    report["recurrence_honest_max"] = max((r["honest_max"] for r in rec), default=0.0)
    report["recurrence_seeded_min_pair"] = min((r["seeded_min_pair"] for r in rec if r["seeded_min_pair"] is not None),
                                               default=None)
    print(json.dumps({k: report[k] for k in ("honest_max", "margin", "recurrence_honest_max",
                                             "recurrence_seeded_min_pair")} | report["thresholds"]))
    if args.json:
        run = provenance(args.device, "bench.structure_calibration", argv)
        Path(args.json).write_text(json.dumps(results_file(report, run, args.seeds, args.device), indent=1) + "\n")
    return report


def results_file(report: dict, run: dict, seeds: int, device: str) -> dict:
    """``main``'s report as a ``bench/results/structure-calibration/`` file: ``run`` (the
    provenance) with one calibration run and no judged candidates."""
    summary = {k: report[k] for k in ("honest_max", "margin", "recurrence_honest_max", "recurrence_seeded_min_pair")}
    tasks = [{"task": t, "slice_honest_max": report["honest"][t], "slice_bugs_min": report["bugs"][t],
              "recurrence": report["recurrence"][t]} for t in report["honest"]]
    where = "CPU shapes, Triton interpreter" if device == "cpu" else "GPU shapes"
    return run | {"calibration": [{"run": f"{where} (--seeds {seeds})", "summary": summary | report["thresholds"],
                                   "tasks": tasks}], "candidates": []}


if __name__ == "__main__":
    main()
