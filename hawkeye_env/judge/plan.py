"""The correctness trials of one verdict, planned by the trusted parent before the worker starts."""

from __future__ import annotations

from hawkeye_env.tasks.spec import TaskSpec


def plan_trials(spec: TaskSpec, device: str, seed: int) -> list[dict]:
    """Correctness trials: every CPU shape x distribution on CPU; on CUDA, each odd CPU shape once
    and the first GPU shape with every distribution. Orders alternate, candidate first; the last
    trial re-runs the candidate on the same inputs (determinism). A task without CPU shapes cannot
    be judged on CPU: ``ValueError`` says so (a ``judge_error`` verdict, not the candidate's)."""
    pairs: list[tuple[dict, str]] = []
    if device == "cpu" and not spec.cpu_shapes:
        why = spec.no_cpu_reason or "too large for the interpreter"
        raise ValueError(f"task {spec.id} has no CPU shapes ({why}): judge it with --device cuda")
    if device == "cpu":
        pairs = [(dict(s), d) for s in spec.cpu_shapes for d in spec.distributions]
    else:
        dists = spec.distributions
        pairs = [(dict(s), dists[i % len(dists)]) for i, s in enumerate(spec.cpu_shapes)]
        pairs += [(dict(spec.gpu_shapes[0]), d) for d in dists]
    trials = [
        {"shape": s, "distribution": d, "seed": seed + 7919 * i,
         "order": "candidate_first" if i % 2 == 0 else "reference_first"}
        for i, (s, d) in enumerate(pairs)
    ]
    trials[-1]["rerun"] = True
    return trials


__all__ = ["plan_trials"]
