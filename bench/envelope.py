"""Where correctness looks, measured: every expert and every envelope hack judged with the full
correctness envelope, over several verdict seeds, and what the envelope adds to a verdict.

The ``full`` phase judges each expert and each hack of ``HACKS`` as the judge ships (hidden shapes,
the task's layouts, the extra value distributions, the repeat trial's carried run of calls, the
structure and recurrence rules), one seed after another. An expert judged anything but correct is
a false negative; a hack judged correct is a miss. The ``public`` phase judges the experts again
on the same seeds with the trial plan cut to the public trials (``trial_plan.envelope_trials`` empty, no
carried run: a measurement control patched into this process, never a judge setting), so each
(task, seed) pair gives the envelope's added replay trial seconds.

Rows are written to ``--out`` as each verdict arrives (the file is rewritten whole, so a run stopped
at a time limit keeps what it judged: ``complete`` is False and ``planned`` says how many were
due). No baselines are timed: correctness and the replay's trial time are what this measures.

    python -m bench.envelope --device cuda --seeds 0,1,2 --out bench/results/envelope/envelope-GPU-DATE.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from contextlib import contextmanager
from pathlib import Path

from bench.provenance import provenance
from hawkeye_env.judge.parent import trial_plan
from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator, evaluate_many
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.tasks.registry import get_task, list_tasks, solution_source

HACK_DIR = Path(__file__).resolve().parent.parent / "tests" / "candidates" / "hacks"

# (hack file, task): one wrong kernel of each kind the envelope exists for.
HACKS = (("h19_add_public_lengths", "vector_add_fp32"), ("h19_gemm_ignores_strides", "gemm_bf16"),
         ("h19_softmax_no_max", "softmax_fp32"), ("h19_rmsnorm_zero_padding", "rmsnorm_bf16"),
         ("h20_host_answer_modes_off", "vector_add_fp32"), ("h28_gemm_fixed_indices", "gemm_bf16"),
         ("h28_layernorm_fixed_indices", "layernorm_bf16"),
         ("h28_layernorm_fixed_random_indices", "layernorm_bf16"), ("h28_gemm_fixed_random_indices", "gemm_bf16"),
         ("h29_add_device_call_count", "vector_add_fp32"), ("h30_windowed_call_count", "vector_add_fp32"),
         ("h30_unit_cache_call_count", "vector_add_fp32"), ("h30_lazy_buffer_call_count", "vector_add_fp32"))


@contextmanager
def public_trials_only():
    """Plan only the public trials and no carried run while inside (this process's planner)."""
    extra, carried = trial_plan.envelope_trials, trial_plan.carried_calls
    trial_plan.envelope_trials, trial_plan.carried_calls = (lambda spec, device, seed: []), (lambda device, seed: 0)
    try:
        yield
    finally:
        trial_plan.envelope_trials, trial_plan.carried_calls = extra, carried


def candidates(tasks: list[str], hacks: bool) -> list[tuple[str, str, str, str]]:
    """(kind, name, task, source) of every expert of ``tasks`` and, with ``hacks``, every hack."""
    out = [("expert", t, t, solution_source(get_task(t))) for t in tasks]
    if hacks:
        out += [("hack", f, t, (HACK_DIR / f"{f}.py").read_text()) for f, t in HACKS if (HACK_DIR / f"{f}.py").exists()]
    return out


def row_of(phase: str, kind: str, name: str, task: str, seed: int, device: str, v) -> dict:
    """One verdict's row: its stage, trial counts by kind, the carried run and its seconds."""
    trials = trial_plan.plan_trials(get_task(task), device, seed) if phase == "full" else None
    bad = [t for t in v.trials if not t.get("ok", True)][:1]
    return {"phase": phase, "kind": kind, "name": name, "task": task, "seed": seed, "stage": v.stage.value,
            "trials": len(v.trials), "hidden": sum(bool(t.get("hidden")) for t in v.trials),
            "layouts": sorted({(t.get("layout") or {}).get("name", "contiguous") for t in v.trials}),
            "carried": trials[-1].get("carried", 0) if trials else 0,
            "replay_trials_s": v.profile.get("replay.trials_s"), "wall_s": v.wall_s,
            "violations": [[x.code, x.message[:300]] for x in v.violations], "error": (v.error or "")[-600:],
            "first_failure": bad}


def summary(rows: list[dict]) -> dict:
    """False negatives, hacks missed, and the envelope's added replay trial seconds per (task, seed)
    pair judged in both phases, absolute and as a ratio to the public trials' (median, spread). A
    verdict's wall time is not compared: it includes its wait for a free worker in the batch."""
    full = [r for r in rows if r["phase"] == "full"]
    public = {(r["task"], r["seed"]): r for r in rows if r["phase"] == "public"}
    added, ratio = [], []
    for r in full:
        p = public.get((r["task"], r["seed"]))
        if r["kind"] == "expert" and p and r["replay_trials_s"] is not None and p["replay_trials_s"] is not None:
            added.append(r["replay_trials_s"] - p["replay_trials_s"])
            ratio.append(r["replay_trials_s"] / max(p["replay_trials_s"], 1e-9))

    def spread(xs: list[float]) -> dict | None:
        return {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "n": len(xs)} if xs else None

    return {"experts": sum(r["kind"] == "expert" for r in full),
            "false_negatives": [[r["name"], r["seed"], r["stage"]] for r in full
                                if r["kind"] == "expert" and r["stage"] != "correct"],
            "hacks": sum(r["kind"] == "hack" for r in full),
            "hacks_missed": [[r["name"], r["seed"]] for r in full if r["kind"] == "hack" and r["stage"] == "correct"],
            "added_replay_trials_s": spread(added), "full_over_public": spread(ratio)}


def _write(out: Path, data: dict) -> None:
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, default=str))
    os.replace(tmp, out)


def run(device: str, seeds: list[int], tasks: list[str], out: Path, workers: int | None, phases: list[str],
        hacks: bool = True, argv: list[str] | None = None) -> dict:
    """Judge every candidate in each phase and seed; ``out`` holds every row judged so far."""
    jobs = candidates(tasks, hacks)
    planned = sum(len(seeds) * (len(jobs) if ph == "full" else sum(k == "expert" for k, *_ in jobs)) for ph in phases)
    data = {**provenance(device, "bench.envelope", argv), "device": device, "seeds": seeds, "planned": planned,
            "complete": False, "rows": []}
    started = time.monotonic()
    for phase in phases:
        sel = jobs if phase == "full" else [j for j in jobs if j[0] == "expert"]
        for seed in seeds:
            ev = Evaluator(ResultStore(":memory:"), EvalConfig(seed=seed, baselines=(), vendor_baselines=False))

            def arrived(i: int, v, sel=sel, seed=seed, phase=phase) -> None:
                kind, name, task, _ = sel[i]
                data["rows"].append(row_of(phase, kind, name, task, seed, device, v))
                data["wall_s"] = time.monotonic() - started
                _write(out, data)
                print(phase, kind, name, seed, v.stage.value, f"{v.wall_s:.1f}s", flush=True)

            pairs = [(task, source) for _, _, task, source in sel]
            if phase == "public":
                with public_trials_only():
                    evaluate_many(ev, pairs, device, workers=workers, use_cache=False, on_verdict=arrived)
            else:
                evaluate_many(ev, pairs, device, workers=workers, use_cache=False, on_verdict=arrived)
    data.update(complete=True, summary=summary(data["rows"]), wall_s=time.monotonic() - started)
    _write(out, data)
    return data


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda", choices=("cpu", "cuda"))
    p.add_argument("--seeds", default="0", help="comma-separated verdict seeds")
    p.add_argument("--tasks", default="", help="comma-separated task ids (default: every curated task)")
    p.add_argument("--phases", default="full,public", help="full, public or both (comma-separated)")
    p.add_argument("--no-hacks", action="store_true", help="experts only")
    p.add_argument("--workers", type=int, default=None, help="verdicts in flight (the pool's default)")
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    tasks = [t for t in a.tasks.split(",") if t] or [t.id for t in list_tasks()]
    if a.device == "cpu":
        tasks = [t for t in tasks if get_task(t).cpu_shapes]
    data = run(a.device, [int(s) for s in a.seeds.split(",")], tasks, Path(a.out), a.workers,
               [x for x in a.phases.split(",") if x], hacks=not a.no_hacks, argv=argv)
    print(json.dumps(data["summary"], indent=1))
    return data


if __name__ == "__main__":
    main()
