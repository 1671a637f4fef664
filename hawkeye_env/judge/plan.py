"""The correctness trials of one verdict, planned by the trusted parent before the worker starts."""

from __future__ import annotations

from hawkeye_env.judge import kernelbench_protocol
from hawkeye_env.judge.inputs import derived_seed
from hawkeye_env.tasks.spec import TaskSpec

# The judge's protocols (``EvalConfig.protocol``): hawkeye's trials alone, or also KernelBench's.
PROTOCOLS = ("hawkeye", kernelbench_protocol.PROTOCOL)


def plan_trials(spec: TaskSpec, device: str, seed: int, protocol: str = "hawkeye") -> list[dict]:
    """Correctness trials: every CPU shape x distribution on CPU; on CUDA, each odd CPU shape once
    and the first GPU shape with every distribution. Orders alternate, candidate first; the last
    of them re-runs the candidate on the same inputs (determinism). With ``protocol`` "kernelbench"
    KernelBench's trials follow (``kernelbench_protocol.plan``), each marked ``"protocol"``. A task
    without CPU shapes cannot be judged on CPU: ``ValueError`` says so (a ``judge_error`` verdict,
    not the candidate's); so does an unknown ``protocol``."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}; known: {', '.join(PROTOCOLS)}")
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
        {"shape": s, "distribution": d, "seed": derived_seed(seed, f"trial{i}"),
         "order": "candidate_first" if i % 2 == 0 else "reference_first"}
        for i, (s, d) in enumerate(pairs)
    ]
    trials[-1]["rerun"] = True
    if protocol == kernelbench_protocol.PROTOCOL:
        trials += kernelbench_protocol.plan(spec, device, seed)
    return trials


__all__ = ["PROTOCOLS", "plan_trials"]
