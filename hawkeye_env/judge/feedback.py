"""The text an agent reads after a verdict: what failed, by how much, and what to try next."""

from __future__ import annotations

from hawkeye_env.judge.verdict import VIOLATION_CODES, Stage, Verdict

_HEADLINES = {
    Stage.REJECTED: "REJECTED: the candidate broke a rule of the judge.",
    Stage.NO_SOURCE: "NO SOURCE: no candidate module was found.",
    Stage.COMPILE_ERROR: "COMPILE ERROR: the module or ModelNew(...) failed to build.",
    Stage.RUNTIME_ERROR: "RUNTIME ERROR: the forward raised, crashed, hung or ran out of memory.",
    Stage.INCORRECT: "INCORRECT: an output does not match the reference.",
    Stage.CORRECT: "CORRECT.",
}


def render_feedback(v: Verdict) -> str:
    """Plain-text feedback for ``v``; stable enough for prompts, short enough for a turn."""
    lines = [f"[{v.task} on {v.device}] {_HEADLINES[v.stage]}"]
    for viol in v.violations:
        lines.append(f"- violation {viol.code}: {viol.message} ({VIOLATION_CODES[viol.code]})")
    if v.error:
        lines.append(v.error)
    failed = [t for t in v.trials if not t.get("ok", True)]
    if failed:
        t = failed[0]
        lines.append(
            f"Failed at shape {t['shape']} with {t['distribution']} inputs ({t['order']}): {t['reason']}"
        )
    scored = [t for t in v.trials if t.get("scored", True)]
    passed = sum(1 for t in scored if t.get("ok"))
    if v.trials:
        skipped = len(v.trials) - len(scored)
        note = f" ({skipped} not scored: the reference was not finite)" if skipped else ""
        lines.append(f"{passed}/{len(scored)} correctness trials passed{note}.")
    if v.timed:
        cand = v.times_ms["candidate"]
        parts = ", ".join(f"{n} {v.times_ms[n]:.4f} ms ({s:.2f}x)" for n, s in sorted(v.speedup.items()))
        lines.append(f"Candidate {cand:.4f} ms (CV {v.timing.get('cv', 0):.3f}); baselines: {parts}.")
        launch = v.timing.get("host_launch_ms")
        if v.timing.get("host_bound") and launch:
            lines.append(f"Host-bound: the host takes {launch:.4f} ms to enqueue a call whose device work takes "
                         f"{v.timing['median_ms']:.4f} ms, so called back to back it runs at the host's pace "
                         "(the score reads the device time; fewer launches and ops per call shorten the host's).")
        floor = v.timing.get("roofline_floor_ms")
        if floor:
            lines.append(f"Roofline floor {floor:.4f} ms: the candidate runs at {floor / cand:.0%} of it.")
    elif v.correct:
        lines.append("Untimed: timing, speedups and unit profiling metrics need a CUDA GPU.")
    if v.baselines_unavailable:
        reasons = "; ".join(f"{n} ({r})" for n, r in sorted(v.baselines_unavailable.items()))
        lines.append(f"Baselines unavailable here: {reasons}.")
    lines.append(f"Reward {v.reward:.3f} ({v.reward_version}).")
    return "\n".join(lines)
