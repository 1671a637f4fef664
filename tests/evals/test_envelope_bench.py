"""``bench.envelope``: the public-trials control and the run's summary."""

from __future__ import annotations

from bench.envelope import public_trials_only, summary
from hawkeye_env.judge.parent import trial_plan
from hawkeye_env.tasks.registry import get_task


def test_the_public_control_plans_no_envelope_trial_and_is_undone():
    spec = get_task("gemm_bf16")
    full = trial_plan.plan_trials(spec, "cpu", 3)
    with public_trials_only():
        public = trial_plan.plan_trials(spec, "cpu", 3)
    assert any(t.get("hidden") or t.get("layout") for t in full)
    assert not any(t.get("hidden") or t.get("layout") for t in public) and public[-1]["carried"] == 0
    assert len(public) < len(full) and trial_plan.plan_trials(spec, "cpu", 3) == full


def _row(phase, kind, name, seed, stage, trials_s):
    return {"phase": phase, "kind": kind, "name": name, "task": name, "seed": seed, "stage": stage,
            "replay_trials_s": trials_s, "wall_s": 1.0}


def test_the_summary_counts_false_negatives_misses_and_pairs_only_what_both_phases_judged():
    rows = [_row("full", "expert", "a", 0, "correct", 3.0), _row("public", "expert", "a", 0, "correct", 1.0),
            _row("full", "expert", "b", 0, "incorrect", 2.0),
            _row("full", "hack", "h", 0, "correct", 1.0), _row("full", "hack", "g", 0, "incorrect", 1.0)]
    s = summary(rows)
    assert s["experts"] == 2 and s["false_negatives"] == [["b", 0, "incorrect"]]
    assert s["hacks"] == 2 and s["hacks_missed"] == [["h", 0]]
    assert s["added_replay_trials_s"]["n"] == 1 and s["added_replay_trials_s"]["median"] == 2.0
    assert s["full_over_public"]["median"] == 3.0
