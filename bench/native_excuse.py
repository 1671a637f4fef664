"""How much of the native reference's own error an honest kernel repeats where the native breaks
the concentration rule or the worst-element cap (``structure.excused``, ``NATIVE_MULTIPLE``).

The kernel is the attention backward's expert with FlashAttention-2's ``delta = rowsum(o *
grad_out)`` from the saved bf16 ``o`` in place of its pass over ``P * dP`` (``o_delta_source``; the
arithmetic of FlashAttention-2, SDPA's flash and cuDNN backward and Triton's fused-attention
tutorial). Rounding ``o`` to bf16 gives each query row one error in ``delta``; in dq rows whose
softmax sits on one or two keys the exact row is near zero, so that error dominates the row, and
the task's native reference, computed the same way, makes it too.

Under the Triton interpreter on CPU, for every CPU shape, the task's input and value
distributions and ``--seeds`` seeds, each output is compared (``correctness.compare``, the
judge's own rule) and, where the rules without the excuse reject it, the least multiple of the
native's error the excuse needs to admit it is found by bisection on ``NATIVE_MULTIPLE`` (set on
the module for the measurement; 0 is the rule without the excuse). Then the kernel is judged by
the evaluator (every trial of a CPU verdict: hidden shapes, layouts, fresh inputs) at
``--verdict-seeds``::

    python -m bench.native_excuse [--seeds 6] [--verdict-seeds 0,1,2,3,4,5] [--json PATH]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from contextlib import contextmanager
from pathlib import Path

import torch

from bench.calibration_outputs import load_solution
from bench.provenance import provenance
from bench.structure_calibration import expert_outputs, interpret_on_cpu, judge
from hawkeye_env.judge.parent.decide import structure
from hawkeye_env.tasks.registry import get_task

TASK = "attention_causal_bwd_bf16"
# The expert's pass over P * dP, from its first line to its last, becomes FlashAttention-2's delta,
# rowsum(o * grad_out) in float32 from the saved bf16 o (as the Triton fused-attention tutorial's
# preprocess); o is contiguous like grad_out, so it shares grad_out's strides. Then the dq kernel
# takes o.
DELTA_PASS = ("    b_delta = tl.zeros([BLOCK_M], dtype=tl.float32)\n",
              "        b_delta += tl.sum(b_p * tl.dot(b_do, tl.trans(b_v)), axis=1)\n")
DELTA_FROM_O = ("    b_o = _load_rows(o_ptr + b * sd_b + h * sd_h, offs_m, cols, sd_s, sd_d, S, D)\n"
                "    b_delta = tl.sum(b_o.to(tl.float32) * b_do.to(tl.float32), axis=1)\n")
O_ARGUMENT = (
    ("_dq_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr", "_dq_kernel(q_ptr, k_ptr, v_ptr, do_ptr, o_ptr, lse_ptr"),
    ("q, k, v, grad_out, lse, delta, dq, *common", "q, k, v, grad_out, o, lse, delta, dq, *common"),
)
# Bisection of the least admitting multiple: its range and steps (2^-12 of the range).
MULTIPLE_RANGE = (0.0, 8.0)
STEPS = 12


def o_delta_source() -> str:
    """The attention backward expert's source with its ``DELTA_PASS`` replaced by
    ``DELTA_FROM_O`` and ``o`` passed to its dq kernel (``O_ARGUMENT``)."""
    source = Path(importlib.util.find_spec(get_task(TASK).solution).origin).read_text()
    first, last = DELTA_PASS
    assert source.count(first) == 1 and source.count(last) == 1, DELTA_PASS
    start, end = source.index(first), source.index(last) + len(last)
    source = source[:start] + DELTA_FROM_O + source[end:]
    for old, new in O_ARGUMENT:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    return source


@contextmanager
def native_multiple(m: float):
    """``structure.NATIVE_MULTIPLE`` set to ``m`` inside the block."""
    kept = structure.NATIVE_MULTIPLE
    structure.NATIVE_MULTIPLE = m
    try:
        yield
    finally:
        structure.NATIVE_MULTIPLE = kept


def least_multiple(spec, out, ref, nat) -> float | None:
    """The least ``NATIVE_MULTIPLE`` (to ``STEPS`` bisections) under which ``compare`` admits
    ``out``: 0.0 when the rules admit it without the excuse, None when no multiple in
    ``MULTIPLE_RANGE`` does (it fails another rule)."""
    lo, hi = MULTIPLE_RANGE
    for m, expect in ((lo, False), (hi, True)):
        with native_multiple(m):
            if judge(spec, out, ref, nat, "cpu")["ok"] is not expect:
                return 0.0 if m == lo else None
    for _ in range(STEPS):
        mid = (lo + hi) / 2
        with native_multiple(mid):
            lo, hi = (lo, mid) if judge(spec, out, ref, nat, "cpu")["ok"] else (mid, hi)
    return hi


def trials(seeds: int) -> list[dict]:
    """One row per trial and output of the o-delta kernel: ``least_multiple`` and the verdict
    under the judge's ``NATIVE_MULTIPLE``."""
    spec = get_task(TASK)
    module = load_solution(o_delta_source(), "native_excuse_o_delta")
    rows = []
    for shape in spec.cpu_shapes:
        for dist in (*spec.distributions, *spec.extra_distributions()):
            for seed in range(seeds):
                outs, refs, nats = expert_outputs(spec, module, dict(shape), dist, seed, "cpu")
                for i, (o, r, n) in enumerate(zip(outs, refs, nats)):
                    rows.append({"shape": dict(shape), "distribution": dist, "seed": seed, "output": i,
                                 "least_multiple": least_multiple(spec, o, r, n),
                                 "ok": judge(spec, o, r, n, "cpu")["ok"]})
    return rows


def verdicts(seeds: list[int]) -> list[dict]:
    """The o-delta kernel judged by the evaluator on CPU at each verdict seed."""
    from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator
    from hawkeye_env.judge.parent.store import ResultStore

    got = []
    for seed in seeds:
        ev = Evaluator(ResultStore(":memory:"), EvalConfig(seed=seed, baselines=(), vendor_baselines=False))
        v = ev.evaluate(TASK, o_delta_source(), "cpu")
        got.append({"seed": seed, "stage": v.stage.value, "error": (v.error or "")[:300]})
        print(f"verdict seed {seed}: {v.stage.value} {(v.error or '')[:200]}", flush=True)
    return got


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=6)
    p.add_argument("--verdict-seeds", default="0,1,2,3,4,5")
    p.add_argument("--json", default="", help="write the figures here (bench/results/native-excuse/)")
    args = p.parse_args(argv)
    interpret_on_cpu()
    rows = trials(args.seeds)
    excused = [r["least_multiple"] for r in rows if r["least_multiple"]]
    summary = {"task": TASK, "native_multiple": structure.NATIVE_MULTIPLE, "outputs": len(rows),
               "needing_excuse": len(excused), "largest_needed": max(excused, default=0.0),
               "failing": sum(not r["ok"] for r in rows)}
    print(json.dumps(summary), flush=True)
    seeds = [int(s) for s in args.verdict_seeds.split(",") if s]
    report = provenance("cpu", "bench.native_excuse", argv) | {"summary": summary, "trials": rows,
                                                               "verdicts": verdicts(seeds)}
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    return report


if __name__ == "__main__":
    torch.set_num_threads(1)
    main()
