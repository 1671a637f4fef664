"""The typed wire formats (``hawkeye_env/judge/shared/wire.py``) name every field the processes
really send: one CPU verdict's recording job, replay job and both replies are captured as they
cross ``run_job.run_in_worker``, and each key must be declared by its ``TypedDict``."""

from __future__ import annotations

import typing

from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator
from hawkeye_env.judge.parent.launch import run_job
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.shared import wire
from hawkeye_env.judge.shared.verdict import Stage
from hawkeye_env.tasks.registry import get_task, solution_source


def _undeclared(value: dict, kind) -> set[str]:
    return set(value) - set(typing.get_type_hints(kind))


def test_every_field_a_cpu_verdict_sends_is_declared(tmp_path, monkeypatch):
    seen = []
    real = run_job.run_in_worker

    def spy(job, *args, **kwargs):
        outcome = real(job, *args, **kwargs)
        reply = outcome.reply  # shallow copies: the parent adds its references to the rows later
        seen.append((dict(job), {**reply, "trials": [dict(r) for r in reply.get("trials", [])]}))
        return outcome

    monkeypatch.setattr(run_job, "run_in_worker", spy)
    ev = Evaluator(ResultStore(tmp_path / "s.sqlite3"), EvalConfig(seed=0))
    v = ev.evaluate("vector_add_fp32", solution_source(get_task("vector_add_fp32")), device="cpu")
    assert v.stage is Stage.CORRECT, v.feedback
    (record, recorded), (replay, replayed) = seen
    assert record.get("record") and replay["kind"] == "replay"
    assert _undeclared(record, wire.Job) == set()
    assert _undeclared(replay, wire.ReplayJob) == set()
    for trial in record["trials"] + replay["trials"]:
        assert _undeclared(trial, wire.Trial) == set()
    assert _undeclared(recorded, wire.Reply) == set() and _undeclared(replayed, wire.Reply) == set()
    assert set().union(*(_undeclared(e, wire.RecordedEntry) for e in recorded["plans"])) == set()
    assert set().union(*(_undeclared(row, wire.TrialRow) for row in replayed["trials"])) == set()


def test_the_check_sees_an_undeclared_field():
    assert _undeclared({"task": "t", "smuggled": 1}, wire.Job) == {"smuggled"}
