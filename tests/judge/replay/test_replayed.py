"""The parent's side of a replayed GPU verdict (``replayed.record_and_replay``), with the two
worker processes stood in by functions: what each is sent, and how each reply a candidate could
write (or a failing replay) decides the verdict."""

from __future__ import annotations

import copy

import pytest

from hawkeye_env.judge.parent import record_replay
from hawkeye_env.judge.parent.launch import run_job, standby, start
from hawkeye_env.judge.shared.verdict import Stage, Verdict
from hawkeye_env.tasks.spec import ALLOCATION_AND_VIEW_OPS
from tests.judge.replay.test_launch_plan import recorded

TRIALS = [{"shape": {"N": 8}, "distribution": "normal", "seed": 11, "order": "candidate_first"},
          {"shape": {"N": 8}, "distribution": "uniform", "seed": 12, "order": "reference_first"},
          {"shape": {"N": 64}, "distribution": "normal", "seed": 13, "order": "candidate_first", "rerun": True}]
TIMING = {"seed": 99, "iters": 5, "retries": 0, "baselines": []}
JOB = {"task": "vector_add_fp32", "source": "...", "device": "cuda", "module_name": "m", "trials": TRIALS,
       "timing": TIMING, "task_dirs": []}


def record_reply(plans) -> dict:
    return {"stage": "ok", "error": "", "violations": [], "trials": [], "timing": {}, "profile": {}, "plans": plans}


def honest_plans(n=3) -> list:
    """Plans for ``TRIALS``' recordings: N=8, N=64, and N=64 again as a model's second forward."""
    plan, kernels = recorded()
    return [{"plan": copy.deepcopy(plan), "kernels": copy.deepcopy(kernels)} for _ in range(n)]


def run(monkeypatch, record, replay=None):
    """``record_and_replay`` on JOB; the stand-ins answer ``record`` then ``replay`` (reply dicts,
    or None for a process that died). Returns (result, verdict, jobs sent)."""
    sent = []

    def fake(job, timeout_s, memory, lane=None, serve=start.WORKER_TARGET):
        sent.append((serve, job))
        reply = record if serve == start.WORKER_TARGET else replay
        return run_job.Outcome(reply, "" if reply is not None else "crash", "" if reply else "killed by SIGSEGV")

    monkeypatch.setattr(run_job, "run_in_worker", fake)
    monkeypatch.setattr(standby, "POOL", _Primed(sent))
    v = Verdict(task=JOB["task"], device="cuda", stage=Stage.CORRECT, source_hash="0" * 64, versions={})
    out = record_replay.record_and_replay(JOB, ALLOCATION_AND_VIEW_OPS, 10.0, 1 << 30, None, v)
    return out, v, sent


class _Primed:
    """Stands in for the standby pool: notes which process kind was primed, starts nothing."""

    def __init__(self, sent: list):
        self.sent = sent

    def prime(self, serve, device, lane, memory):
        self.sent.append(("primed", serve))


def good_replay() -> dict:
    import torch

    rows = [{"outputs": [torch.zeros(8)], "expected_dtypes": []} for _ in TRIALS]
    rows[-1].update(rerun=[torch.zeros(8)], fresh={"outputs": [torch.zeros(8)]})
    return {"stage": "ok", "error": "", "violations": [], "trials": rows, "timing": {}, "profile": {}}


def test_the_worker_records_on_seeds_the_replay_never_shares(monkeypatch):
    replay = good_replay()
    replay["timing"] = None
    job = dict(JOB, timing=None)
    monkeypatch.setattr("tests.judge.replay.test_replayed.JOB", job)
    out, v, sent = run(monkeypatch, record_reply(honest_plans()), replay)
    assert out is replay, v.error
    assert sent[0] == ("primed", start.REPLAY_TARGET)  # its process warms while the worker records
    (w_serve, w_job), (r_serve, r_job) = sent[1:]
    assert w_serve == start.WORKER_TARGET and r_serve == start.REPLAY_TARGET
    assert w_job["record"] and w_job["timing"] is None
    # one recording per shape, and the repeat trial's shape again as a model's second forward
    assert [(t["shape"], t.get("warm", False)) for t in w_job["trials"]] == [({"N": 8}, False), ({"N": 64}, False),
                                                                              ({"N": 64}, True)]
    assert not {t["seed"] for t in w_job["trials"]} & {t["seed"] for t in TRIALS}
    assert r_job["kind"] == "replay" and r_job["trials"] == TRIALS and "source" not in r_job
    assert [(p["shape"], p["warm"]) for p in r_job["plans"]] == [({"N": 8}, False), ({"N": 64}, False),
                                                                ({"N": 64}, True)]


def test_a_refused_forward_is_a_runtime_error_with_the_reason(monkeypatch):
    plans = honest_plans()
    plans[1] = {"refused": "the forward reads device data on the host (aten._local_scalar_dense)"}
    out, v, sent = run(monkeypatch, record_reply(plans))
    assert out is None and len(sent) == 2
    assert v.stage == Stage.RUNTIME_ERROR and "not replayable at shape {'N': 64}" in v.error and "host" in v.error


def test_a_malformed_plan_is_an_invalid_plan_violation(monkeypatch):
    plans = honest_plans()
    plans[0]["plan"]["steps"].insert(0, {"op": "aten::mm", "args": [], "kwargs": {}, "outs": []})
    out, v, sent = run(monkeypatch, record_reply(plans))
    assert out is None and len(sent) == 2
    assert v.stage == Stage.REJECTED and v.violations[0].code == "invalid_plan" and "aten.mm" in v.violations[0].message


@pytest.mark.parametrize("edit", [
    lambda r: r.update(trials=[{"outputs": []}]),  # rows the recording job never asked for
    lambda r: r.update(plans=r["plans"][:1]),  # a plan missing
    lambda r: r["plans"].__setitem__(0, {"plan": {}, "kernels": [], "extra": 1}),
    lambda r: r.update(stage="correct"),
])
def test_a_recording_reply_that_does_not_fit_its_job_is_forged(monkeypatch, edit):
    reply = record_reply(honest_plans())
    edit(reply)
    out, v, _ = run(monkeypatch, reply)
    assert out is None and v.stage == Stage.REJECTED and v.violations[0].code == "forged_reply"


def test_worker_violations_and_errors_decide_before_any_replay(monkeypatch):
    reply = record_reply(honest_plans())
    reply["violations"] = [["torch_compute_op", "aten.mm x1"]]
    out, v, sent = run(monkeypatch, reply)
    assert out is None and len(sent) == 2 and v.stage == Stage.REJECTED
    reply = record_reply([])
    reply.update(stage="compile_error", error="SyntaxError in kernel")
    out, v, sent = run(monkeypatch, reply)
    assert out is None and v.stage == Stage.COMPILE_ERROR and "SyntaxError" in v.error


def test_a_replay_that_dies_is_the_candidates_runtime_error(monkeypatch):
    out, v, sent = run(monkeypatch, record_reply(honest_plans()), replay=None)
    assert out is None and len(sent) == 3
    assert v.stage == Stage.RUNTIME_ERROR and "replay of the candidate's kernels failed" in v.error


def test_the_replay_is_the_default_on_both_devices_and_can_be_turned_off(monkeypatch):
    monkeypatch.delenv(record_replay.ENV_FLAG, raising=False)
    assert record_replay.mode("cuda") == "replay" and record_replay.mode("cpu") == "replay"
    monkeypatch.setenv(record_replay.ENV_FLAG, "off")
    assert record_replay.mode("cuda") == "worker" and record_replay.mode("cpu") == "worker"
