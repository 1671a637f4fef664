"""A worker's reply is untrusted data (docs/threat-model.md #20, #23): a reply that does not fit the
parent's plan is a ``forged_reply`` violation, never a judge crash, never a correct verdict, and
never a source of baseline times.

The replies here are what a candidate that took over its worker could send instead of the
judge's own: ``sandbox.run_in_worker`` is replaced so the parent reads them as it would a real
reply. They travel the worker-reply path (``HAWKEYE_REPLAY=off``); the replay's reply has the same
format and is checked by the same ``reply_check.reply_problem``.
"""

from __future__ import annotations

import pytest
import torch

from hawkeye_env.judge.parent.decide import checks
from hawkeye_env.judge.parent.evaluator import JUDGE_ERROR, EvalConfig, Evaluator, evaluate_many, plan_trials
from hawkeye_env.judge.parent.launch import run_job
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.shared.verdict import Stage
from hawkeye_env.tasks.registry import get_task, solution_source
from reward.score import REWARD_COMPILE_ERROR, REWARD_VIOLATION

TASK = "vector_add_fp32"
SOURCE = solution_source(get_task(TASK))


def _judge(monkeypatch, reply, violations=()):
    outcome = run_job.Outcome(reply, violations=list(violations))
    if reply is None:
        outcome.failure, outcome.detail = "crash", "worker was killed by SIGKILL"
    monkeypatch.setattr(run_job, "run_in_worker", lambda *a, **k: outcome)
    monkeypatch.setenv("HAWKEYE_REPLAY", "off")
    return Evaluator(ResultStore(":memory:"), EvalConfig(seed=0)).evaluate(TASK, SOURCE, "cpu")


def _honest_rows(dtype=torch.float32) -> list[dict]:
    """The rows an honest worker would send for ``EvalConfig(seed=0)``'s plan: right answers."""
    from hawkeye_env.judge.parent.decide.references import trial_references

    spec = get_task(TASK)
    rows = []
    for trial in plan_trials(spec, "cpu", 0):
        got = trial_references(spec, trial, "cpu")
        row = {"outputs": [r.to(dtype) for r in got.reference], "expected_dtypes": ["float32"]}
        if trial.get("rerun"):
            row["rerun"] = [r.to(dtype) for r in got.reference]
            row["fresh"] = {"outputs": [r.to(dtype) for r in got.fresh_reference]}
        rows.append(row)
    return rows


def test_the_honest_rows_pass(monkeypatch):
    v = _judge(monkeypatch, {"stage": "ok", "violations": [], "trials": _honest_rows(), "timing": {}})
    assert v.stage is Stage.CORRECT, v.feedback


@pytest.mark.parametrize(
    ("reply", "fragment"),
    [
        ({"stage": "bogus"}, "unknown stage"),
        ({"kind": "final"}, "unknown stage"),
        ("not a dict", "not a dict"),
        ({"stage": "ok", "violations": [["not_a_code", "x"]]}, "unknown violation code"),
        ({"stage": "ok", "violations": [], "trials": [], "timing": {}}, "0 trial rows"),
        ({"stage": "ok", "violations": [], "trials": [{"outputs": ["not a tensor"]}]}, "trial rows"),
        ({"stage": "ok", "error": 3}, "error is not a string"),
    ],
)
def test_a_reply_that_does_not_fit_the_plan_is_a_forged_reply(monkeypatch, reply, fragment):
    v = _judge(monkeypatch, reply)
    assert v.stage is Stage.REJECTED, v.feedback
    assert [x.code for x in v.violations] == ["forged_reply"] and fragment in v.violations[0].message
    assert v.reward == REWARD_VIOLATION < REWARD_COMPILE_ERROR


def test_zero_trial_rows_are_never_correct(monkeypatch):
    """The reply that scored correct on any task: no rows, so nothing was checked."""
    v = _judge(monkeypatch, {"stage": "ok", "violations": [], "trials": [], "timing": {}})
    assert not v.correct and v.stage is Stage.REJECTED


def test_a_missing_repeat_or_an_extra_output_is_forged(monkeypatch):
    rows = _honest_rows()
    del rows[-1]["fresh"]
    v = _judge(monkeypatch, {"stage": "ok", "violations": [], "trials": rows, "timing": {}})
    assert v.violations[0].code == "forged_reply" and "repeats" in v.violations[0].message
    rows = _honest_rows()
    rows[0]["outputs"].append(torch.zeros(3))
    v = _judge(monkeypatch, {"stage": "ok", "violations": [], "trials": rows, "timing": {}})
    assert v.violations[0].code == "forged_reply" and "outputs" in v.violations[0].message


def test_times_the_job_did_not_ask_for_are_refused(monkeypatch):
    """Baseline times (or any times) sent by a worker of an untimed job, say to poison the store."""
    reply = {"stage": "ok", "violations": [], "trials": _honest_rows(),
             "timing": {"eager": {"median_ms": 1000.0}, "candidate": {"median_ms": 0.001}}}
    v = _judge(monkeypatch, reply)
    assert v.stage is Stage.REJECTED and "did not ask" in v.violations[0].message


def test_the_expected_dtype_is_the_parents_not_the_workers(monkeypatch):
    """A bf16 answer to an fp32 task, with the reply claiming bf16 is what the reference returns."""
    rows = _honest_rows(torch.bfloat16)
    for row in rows:
        row["expected_dtypes"] = ["bfloat16"]
    v = _judge(monkeypatch, {"stage": "ok", "violations": [], "trials": rows, "timing": {}})
    assert not v.correct and v.stage is Stage.INCORRECT, v.feedback
    assert "dtype bfloat16 != expected float32" in v.trials[0]["reason"]


def test_an_unknown_code_in_a_progress_report_is_a_verdict_not_a_crash(monkeypatch):
    v = _judge(monkeypatch, None, violations=[["no_such_code", "x"], ["input_mutated", "forward changed input 0"]])
    assert v.stage is Stage.REJECTED
    assert [x.code for x in v.violations] == ["forged_reply"]


def test_a_judge_failure_is_a_verdict_that_is_not_stored(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("a bug in the judge")

    monkeypatch.setattr(checks, "check_trials", broken)
    monkeypatch.setenv("HAWKEYE_REPLAY", "off")
    store = ResultStore(":memory:")
    ev = Evaluator(store, EvalConfig(seed=0))
    monkeypatch.setattr(run_job, "run_in_worker", lambda *a, **k: run_job.Outcome(
        {"stage": "ok", "violations": [], "trials": _honest_rows(), "timing": {}}))
    v = ev.evaluate(TASK, SOURCE, "cpu")
    assert v.stage is Stage.RUNTIME_ERROR and v.error.startswith(JUDGE_ERROR) and "a bug in the judge" in v.error
    monkeypatch.undo()
    again = Evaluator(store, EvalConfig(seed=0)).evaluate(TASK, SOURCE, "cpu")
    assert not again.cached and again.stage is Stage.CORRECT, again.feedback


def test_one_forged_reply_costs_no_other_verdict_of_the_batch(monkeypatch):
    monkeypatch.setenv("HAWKEYE_REPLAY", "off")
    real = run_job.run_in_worker

    def forge_for_one(job, *args, **kwargs):
        if "FORGED" in job["source"]:
            return run_job.Outcome({"stage": "ok", "violations": [], "trials": [], "timing": {}})
        return real(job, *args, **kwargs)

    monkeypatch.setattr(run_job, "run_in_worker", forge_for_one)
    ev = Evaluator(ResultStore(":memory:"), EvalConfig(seed=0))
    verdicts = evaluate_many(ev, [(TASK, SOURCE + "\n# FORGED\n"), (TASK, SOURCE)], device="cpu")
    assert [v.stage for v in verdicts] == [Stage.REJECTED, Stage.CORRECT]


@pytest.mark.parametrize("kind", ["sparse", "meta", "nan_profile", "long_profile", "long_key"])
def test_outputs_that_are_not_dense_host_tensors_and_non_finite_profiles_are_forged(monkeypatch, kind):
    rows = _honest_rows()
    reply = {"stage": "ok", "violations": [], "trials": rows, "timing": {}}
    if kind == "sparse":
        rows[0]["outputs"] = [rows[0]["outputs"][0].to_sparse()]
    elif kind == "meta":
        rows[0]["outputs"] = [torch.empty(rows[0]["outputs"][0].shape, device="meta")]
    elif kind == "nan_profile":
        reply["profile"] = {"import_s": float("nan")}
    elif kind == "long_profile":  # every entry would be copied into the verdict and the store
        reply["profile"] = {f"s{i}": 0.0 for i in range(65)}
    else:
        reply["profile"] = {"s" * 65: 0.0}
    v = _judge(monkeypatch, reply)
    assert v.stage is Stage.REJECTED and v.violations[0].code == "forged_reply", v.feedback


def test_an_error_row_on_our_own_trial_is_forged(monkeypatch):
    """Only another protocol's trial may come back as ``{"outputs": [], "error": ...}``: on one of
    the verdict's own trials it would skip that trial's check, so it is a forged reply."""
    rows = _honest_rows()
    rows[1] = {"outputs": [], "error": "Traceback: pretend this trial raised"}
    v = _judge(monkeypatch, {"stage": "ok", "violations": [], "trials": rows, "timing": {}})
    assert v.stage is Stage.REJECTED and [x.code for x in v.violations] == ["forged_reply"]
    assert "an error row where the plan allows none" in v.violations[0].message


def test_more_violations_than_a_worker_reports_is_a_forged_reply():
    from hawkeye_env.judge.parent.validate.reply_check import progress_violations
    from hawkeye_env.judge.shared.verdict import MAX_VIOLATIONS

    ok, problem = progress_violations([["forged_reply", "x"]] * MAX_VIOLATIONS)
    assert problem is None and len(ok) == MAX_VIOLATIONS
    flood, problem = progress_violations([["forged_reply", "x" * 8000]] * (MAX_VIOLATIONS + 1))
    assert flood == [] and "more than a worker reports" in problem
