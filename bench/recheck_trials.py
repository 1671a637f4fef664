"""Re-judge single calibration trials: the expert, the vendors and the hacks of ``bench.calibrate``
on one planned trial each, by the verdict's own ``checks.check_trials``.

    python -m bench.recheck_trials gla_fwd_bf16:heavy_tailed:30405526 \\
        simple_gla_long_bf16:heavy_tailed:31693950 --device cuda \\
        --out bench/results/tolerance-recheck/tolerance-recheck-<gpu>-<date>.json

A trial is ``TASK:DISTRIBUTION:SEED`` at the task's timed GPU shape (its first CPU shape on the
CPU), the seed a failure of ``bench.calibrate`` reported. Per output: whether it passes now, its
worst element against the worst-element cap measured on the output's RMS and on its row's
(``correctness.row_rms``; > 1 fails), and at the output-RMS worst element the candidate's, float64
and native values and the row's RMS. Inputs are drawn on the device, so the same seed on the same
GPU kind rebuilds the same trial.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from bench.calibration_outputs import judge_output, load_solution, trial_outputs
from bench.provenance import provenance
from hawkeye_env.judge.parent.decide import correctness, references
from hawkeye_env.judge.parent.evaluator import resolve_device, software_versions
from hawkeye_env.tasks.registry import get_task, solution_source


def recheck(task: str, distribution: str, seed: int, device: str) -> dict:
    """One trial re-judged; see the module docstring."""
    spec = get_task(task)
    shape = dict((spec.gpu_shapes if device == "cuda" else spec.cpu_shapes)[0])
    trial = {"shape": shape, "distribution": distribution, "seed": seed, "order": "candidate_first"}
    began = time.monotonic()
    module = load_solution(solution_source(spec), f"hawkeye_recheck_{spec.id}")
    outs = {name: o for name, o in trial_outputs(spec, module, trial, device)[0].items() if o is not None}
    got = references.trial_references(spec, trial, device)
    r, nat = got.reference[0].double(), got.native[0].double()
    rms = r.pow(2).mean().sqrt()
    local = correctness.row_rms(r, rms).expand_as(r)
    report = {"task": task, "distribution": distribution, "seed": seed, "shape": shape, "rms": float(rms), "rows": {}}
    for name, o in outs.items():
        ok, verdict = judge_output(spec, trial, o, got, device)
        err = (o[0].double() - r).abs()
        global_over = err / (correctness.WORST_CAP * (rms + r.abs()))
        i = int(global_over.argmax())
        report["rows"][name] = {
            "ok": bool(ok),
            "trial": {k: x for k, x in verdict.trials[-1].items() if not isinstance(x, (list, dict))},
            "global_cap_over": float(global_over.max()),
            "row_cap_over": float((err / (correctness.WORST_CAP * (local + r.abs()))).max()),
            "at_global_worst": {"index": i, "got": float(o[0].reshape(-1)[i]), "ref": float(r.reshape(-1)[i]),
                                "native": float(nat.reshape(-1)[i]), "row_rms": float(local.reshape(-1)[i])}}
    report["s"] = time.monotonic() - began
    return report


def parse_trial(text: str) -> tuple[str, str, int]:
    """``"gla_fwd_bf16:heavy_tailed:30405526"`` -> its three parts; ``ValueError`` otherwise."""
    task, distribution, seed = text.split(":")
    return task, distribution, int(seed)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trials", nargs="+", help="TASK:DISTRIBUTION:SEED")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    try:
        trials = [parse_trial(t) for t in args.trials]
    except ValueError:
        parser.error("each trial is TASK:DISTRIBUTION:SEED")
    device = resolve_device(args.device)
    if device == "cpu":
        import os

        from hawkeye_env.judge.sandboxed.common.interpreter.fixes import install_interpreter_fixes

        os.environ["TRITON_INTERPRET"] = "1"
        install_interpreter_fixes()
    report = {**provenance(device, __spec__.name, argv), "device": device, "versions": software_versions(device),
              "trials": {}}
    for task, distribution, seed in trials:
        report["trials"][task] = recheck(task, distribution, seed, device)
        print(task, json.dumps({k: (v["ok"], round(v["global_cap_over"], 3), round(v["row_cap_over"], 3))
                                for k, v in report["trials"][task]["rows"].items()}), flush=True)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1, sort_keys=True, default=str))
    return report


if __name__ == "__main__":
    main()
