"""Standby workers and reply files: a standby serves exactly one candidate and dies, a broken
standby falls back to a fresh worker, verdicts match fresh workers', reply files are read only
when they are plain files within the memory limit, and parent-side comparisons wait for a timed
section on their GPU.

The CPU interpreter exercises the same code as CUDA here (``HAWKEYE_STANDBY=1``); the GPU's extra
warm-up (context, cuBLAS) runs in ``tests/gpu``.
"""

from __future__ import annotations

import os
import threading
import time

import pytest
import torch

from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator, _comparing_on
from hawkeye_env.judge.parent.lanes import EXCLUSIVE, Lane, LaneLock
from hawkeye_env.judge.parent.launch import run_job, standby, start
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.parent.validate import reply_decode
from hawkeye_env.judge.sandboxed.candidate.worker import serve
from hawkeye_env.judge.sandboxed.common import warmup
from hawkeye_env.judge.shared.verdict import Stage
from hawkeye_env.tasks.registry import get_task, solution_source

TASK = "vector_add_fp32"
LIMIT = 8 << 30


@pytest.fixture
def standbys(monkeypatch):
    monkeypatch.setenv(standby.ENV_FLAG, "1")
    pool = standby.StandbyPool()
    monkeypatch.setattr(standby, "POOL", pool)
    yield pool
    pool.shutdown()


def _evaluator(tmp_path) -> Evaluator:
    return Evaluator(ResultStore(tmp_path / "store.sqlite3"), EvalConfig(timeout_s=120, seed=3))


def test_enabled_follows_the_flag(monkeypatch):
    monkeypatch.delenv(standby.ENV_FLAG, raising=False)
    assert standby.enabled("cuda") and standby.enabled("cpu")
    monkeypatch.setenv(standby.ENV_FLAG, "0")
    assert not standby.enabled("cuda") and not standby.enabled("cpu")
    monkeypatch.setenv(standby.ENV_FLAG, "1")
    assert standby.enabled("cpu")


def test_a_standby_serves_one_candidate_then_dies(standbys):
    assert standbys.take(serve, "cpu", None, LIMIT) is None  # none yet: one is started
    first = standbys.take(serve, "cpu", None, LIMIT)
    assert first is not None and first.failure == "" and first.proc.is_alive()
    assert first.setup_s > 0
    source = solution_source(get_task(TASK))
    job = {"task": TASK, "source": source, "device": "cpu", "module_name": "hawkeye_candidate_standby",
           "trials": [{"shape": {"N": 37}, "distribution": "normal", "seed": 1, "order": "candidate_first"}],
           "timing": None}
    outcome = run_job.run_job(serve, job, 120, LIMIT, None, first.handoff())
    assert outcome.failure == "", outcome.detail
    assert outcome.reply["stage"] == "ok" and outcome.reply["profile"]["standby"] == 1.0
    warmed = outcome.reply["profile"]
    assert warmed["standby.imports_s"] > 0 and warmed["standby.triton_s"] > 0
    assert warmed["standby.lock_wait_s"] == 0.0  # no lane lock on CPU
    assert not first.proc.is_alive()  # one job per process
    second = standbys.take(serve, "cpu", None, LIMIT)
    assert second is not None and second.proc.pid != first.proc.pid
    assert standbys.idle() == 1  # the replacement started by the last take


def test_device_warm_up_gives_the_lane_lock_back_between_steps(monkeypatch):
    calls = []
    steps = tuple((f"s{i}_s", lambda device, i=i: calls.append(f"step{i}"), ("cpu",)) for i in range(3))
    monkeypatch.setattr(warmup, "STEPS", steps + (("gpu_only_s", lambda d: calls.append("gpu"), ("cuda",)),))
    spent = warmup.warm_device("cpu", checkpoint=lambda: calls.append("checkpoint"))
    assert calls == ["step0", "checkpoint", "step1", "checkpoint", "step2"]
    assert sorted(spent) == ["s0_cpu_s", "s0_s", "s1_cpu_s", "s1_s", "s2_cpu_s", "s2_s"]


def test_verdicts_from_standbys_match_fresh_workers(standbys, tmp_path, monkeypatch):
    source = solution_source(get_task(TASK))
    wrong = source.replace("a + b", "a - b")
    ev = _evaluator(tmp_path)
    got = [ev.evaluate(TASK, s, "cpu", use_cache=False) for s in (source, source, wrong)]
    assert [v.stage for v in got] == [Stage.CORRECT, Stage.CORRECT, Stage.INCORRECT]
    assert "worker.standby" not in got[0].profile  # the first candidate found no standby
    assert got[1].profile["worker.standby"] == 1.0 and got[2].profile["worker.standby"] == 1.0
    monkeypatch.setenv(standby.ENV_FLAG, "0")
    fresh = [ev.evaluate(TASK, s, "cpu", use_cache=False) for s in (source, wrong)]
    assert [v.stage for v in fresh] == [got[1].stage, got[2].stage]
    assert [t["max_err_ratio"] for t in fresh[0].trials] == [t["max_err_ratio"] for t in got[1].trials]
    assert "worker.standby" not in fresh[0].profile


def test_a_dead_standby_falls_back_to_a_fresh_worker(standbys, tmp_path):
    ev = _evaluator(tmp_path)
    source = solution_source(get_task(TASK))
    ev.evaluate(TASK, source, "cpu", use_cache=False)  # starts a standby (the worker's and the replay's)
    for queue in standbys._idle.values():
        victim = queue[0]
        victim.ready.wait(60)
        victim.proc.kill()
        victim.proc.join(10)
    v = ev.evaluate(TASK, source, "cpu", use_cache=False)
    assert v.stage is Stage.CORRECT
    assert "worker.standby" not in v.profile


def test_reply_file_must_be_a_plain_file_within_the_limit(tmp_path):
    good = tmp_path / "reply.pt"
    torch.save({"kind": "final", "stage": "ok", "x": torch.ones(4)}, good)
    message, size = reply_decode.read_reply_file(str(good), 1 << 20)
    assert message["stage"] == "ok" and size == good.stat().st_size
    with pytest.raises(ValueError, match="exceeds"):
        reply_decode.read_reply_file(str(good), 16)
    link = tmp_path / "link.pt"
    link.symlink_to(good)
    with pytest.raises(ValueError, match="unreadable"):
        reply_decode.read_reply_file(str(link), 1 << 20)
    fifo = tmp_path / "fifo.pt"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="not a regular file"):
        reply_decode.read_reply_file(str(fifo), 1 << 20)
    other = tmp_path / "other.pt"
    torch.save({"kind": "progress"}, other)
    with pytest.raises(ValueError, match="final"):
        reply_decode.read_reply_file(str(other), 1 << 20)
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"not a torch file")
    with pytest.raises(ValueError, match="undecodable"):
        reply_decode.read_reply_file(str(junk), 1 << 20)


def test_verdicts_travel_through_the_reply_file(tmp_path):
    v = _evaluator(tmp_path).evaluate(TASK, solution_source(get_task(TASK)), "cpu", use_cache=False)
    assert v.stage is Stage.CORRECT
    assert v.profile["reply_mb"] > 0


def test_comparisons_wait_for_a_timed_section_on_their_gpu(tmp_path):
    lane = Lane(gpu=1, lock_id="gpu-test", lock_dir=str(tmp_path))
    timing = LaneLock("gpu-test", str(tmp_path))
    assert timing.try_acquire(EXCLUSIVE)
    entered: list[str] = []

    def compare() -> None:
        with _comparing_on(lane, "cuda") as where:
            entered.append(where)

    thread = threading.Thread(target=compare)
    thread.start()
    time.sleep(0.3)
    assert entered == []  # blocked behind the timed section
    timing.release()
    thread.join(10)
    assert entered == ["cuda:1"]
    with _comparing_on(None, "cpu") as where:
        assert where == "cpu"


def test_a_standby_dying_at_handoff_is_a_retryable_crash(standbys):
    standbys.take(serve, "cpu", None, LIMIT)
    ready = standbys.take(serve, "cpu", None, LIMIT)
    ready.proc.kill()
    ready.proc.join(10)
    job = {"task": TASK, "source": "", "device": "cpu", "module_name": "m", "trials": [], "timing": None}
    outcome = run_job.run_job(serve, job, 30, LIMIT, None, ready.handoff())
    assert outcome.reply is None and outcome.failure == "crash"
    assert "killed by SIGKILL" in outcome.detail


def _never_ready(conn, device, memory_limit_bytes, standby_lane=None):
    """A stand-in worker entry point that never finishes its warm-up."""
    import time as _time

    _time.sleep(60)


def test_a_standby_that_is_never_ready_is_discarded(standbys, monkeypatch):
    monkeypatch.setattr(standby, "READY_TIMEOUT_S", 1.0)
    assert standbys.take(_never_ready, "cpu", None, LIMIT) is None  # starts S1
    [queue] = standbys._idle.values()
    [first] = queue
    assert standbys.take(_never_ready, "cpu", None, LIMIT) is None  # waits for S1, which times out
    assert "TimeoutError" in first.failure
    first.proc.join(10)
    assert not first.proc.is_alive()


def test_workers_profile_their_job_on_request(tmp_path, monkeypatch):
    import pstats

    monkeypatch.setenv(run_job.PROFILE_ENV, str(tmp_path / "prof"))
    v = _evaluator(tmp_path).evaluate(TASK, solution_source(get_task(TASK)), "cpu", use_cache=False)
    assert v.stage is Stage.CORRECT
    paths = list((tmp_path / "prof").glob(f"{TASK}-*.prof"))
    names = {func[2] for path in paths for func in pstats.Stats(str(path)).stats}
    assert "run_job" in names and "record" in names  # the candidate's worker recording its plans
    assert "run_replay" in names and "trial" in names  # the replay running the trials


STANDBY_WITHOUT_INTERPRETER_ENV = """
import json
from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.tasks.registry import get_task, solution_source

ev = Evaluator(ResultStore(":memory:"), EvalConfig(timeout_s=120, seed=3))
source = solution_source(get_task("vector_add_fp32"))
verdicts = [ev.evaluate("vector_add_fp32", source, "cpu", use_cache=False) for _ in range(2)]
print(json.dumps([[v.stage.value, v.profile.get("worker.standby", 0.0)] for v in verdicts]))
"""


def test_a_cpu_standby_warms_up_when_the_parent_never_set_the_interpreter_flag(tmp_path):
    """The main job (``hawkeye eval`` on a CPU machine) starts with no ``TRITON_INTERPRET`` in its
    environment; the standby's warm-up kernel must still be defined after the worker set it, or the
    standby fails and every candidate falls back to a fresh worker."""
    import json
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env[standby.ENV_FLAG] = "1"
    script = tmp_path / "standby_main.py"
    script.write_text(STANDBY_WITHOUT_INTERPRETER_ENV)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "active drivers" not in out.stderr, out.stderr[-3000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [["correct", 0.0], ["correct", 1.0]]


def test_priming_starts_one_standby_only_when_none_is_idle(standbys):
    """A GPU verdict primes its replay's process while the worker records: a standby is started
    when the queue is empty, and priming again does not pile up more."""
    replay = start.REPLAY_TARGET
    standbys.prime(replay, "cpu", None, LIMIT)
    standbys.prime(replay, "cpu", None, LIMIT)
    assert standbys.idle() == 1
    ready = standbys.take(replay, "cpu", None, LIMIT)
    assert ready is not None and ready.failure == "" and ready.proc.is_alive()
    ready.discard()


def test_a_standby_serves_only_jobs_of_the_sandbox_mode_it_was_started_in(standbys, monkeypatch):
    """A standby started in the OS sandbox must not take a job judged with ``HAWKEYE_SANDBOX=off``
    (nor the other way round): the sandbox mode is part of the pool's key."""
    from hawkeye_env.judge.parent.launch import isolation

    monkeypatch.setenv(isolation.ENV, "bwrap")
    standbys.prime(serve, "cpu", None, LIMIT)
    assert standbys.idle() == 1
    monkeypatch.setenv(isolation.ENV, "off")
    assert standbys.take(serve, "cpu", None, LIMIT) is None  # none for this mode; one is started
    assert standbys.idle() == 2


def test_the_wait_for_a_warming_standby_is_in_the_outcome(standbys):
    """``Outcome.start_s`` holds the time from asking for a process to holding one: here the
    warm-up of a standby taken right after it was started (the verdict's ``worker_start_s``)."""
    assert standbys.take(serve, "cpu", None, LIMIT) is None  # starts the standby the next job takes
    source = solution_source(get_task(TASK))
    job = {"task": TASK, "source": source, "device": "cpu", "module_name": "hawkeye_candidate_start",
           "trials": [{"shape": {"N": 37}, "distribution": "normal", "seed": 1, "order": "candidate_first"}],
           "timing": None}
    outcome = run_job.run_in_worker(job, 120, LIMIT, None)
    assert outcome.failure == "", outcome.detail
    assert outcome.reply["profile"]["standby"] == 1.0
    warm_up = outcome.reply["profile"]["standby.imports_s"]
    assert outcome.start_s >= 0.5 * warm_up > 0  # it waited for most of the warm-up


def test_a_batch_keeps_as_many_standbys_ahead_as_it_has_in_flight(standbys):
    """With ``holding(3)`` a take tops the queue up towards three (two at a time), hands out a
    ready standby before a warming one, and leaving the block ends the extras."""
    assert standbys.depth == 1
    with standbys.holding(3):
        assert standbys.depth == 3
        assert standbys.take(serve, "cpu", None, LIMIT) is None  # none yet: two are started
        assert standbys.idle() == 2
        first = standbys.take(serve, "cpu", None, LIMIT)  # one taken, two more started (3 idle)
        assert first is not None and standbys.idle() == 3
        first.discard()
        deadline = time.monotonic() + 60
        queue = next(iter(standbys._idle.values()))
        while not all(s.ready.is_set() for s in queue[:1]) and time.monotonic() < deadline:
            time.sleep(0.05)
        queue[-1].ready.clear()  # the newest pretends to be warming: the ready ones go first
        handed = standbys.take(serve, "cpu", None, LIMIT)
        assert handed is not None and handed.ready.is_set()
        handed.discard()
    assert standbys.depth == 1 and standbys.idle() == 1  # the extras were ended


def test_judge_batch_holds_the_depth_of_its_workers(standbys, monkeypatch, tmp_path):
    from hawkeye_env.judge.parent.batch import pool
    from hawkeye_env.judge.shared.verdict import Verdict

    seen = []

    def evaluate(self, task, source, device, use_cache, lane=None):
        seen.append(standbys.depth)
        return Verdict(task=task, device=device, stage=Stage.CORRECT)

    monkeypatch.setattr(Evaluator, "evaluate", evaluate)
    lanes = [Lane(gpu=0, lock_id="test", lock_dir=str(tmp_path))]
    pool.judge_batch(_evaluator(tmp_path), [(TASK, f"# {i}\n") for i in range(5)], "cuda", workers=3, lanes=lanes)
    assert seen and set(seen) == {3} and standbys.depth == 1
    seen.clear()  # on the CPU interpreter the cores are the limit: one standby ahead
    pool.judge_batch(_evaluator(tmp_path), [(TASK, f"# {i}\n") for i in range(5)], "cpu", workers=3)
    assert seen and set(seen) == {1}


def test_the_depth_is_capped_by_the_environment(standbys, monkeypatch):
    monkeypatch.setenv(standby.DEPTH_ENV, "2")
    with standbys.holding(8):
        assert standbys.depth == 2
    monkeypatch.setenv(standby.DEPTH_ENV, "junk")
    with standbys.holding(8):
        assert standbys.depth == 8


@pytest.mark.parametrize("junk", [b"not a torch file", None])
def test_a_mapped_reply_reads_the_same_and_refuses_the_same(tmp_path, junk):
    good = tmp_path / "reply.pt"
    x = torch.arange(1 << 16, dtype=torch.float32)
    torch.save({"kind": "final", "stage": "ok", "x": x}, good)
    message, size = reply_decode.read_reply_file(str(good), 1 << 20, mapped=True)
    good.unlink()  # the scratch folder is removed once read: the mapping stays valid
    assert torch.equal(message["x"], x) and size > x.numel() * 4
    bad = tmp_path / "bad.pt"
    if junk is None:
        bad.symlink_to(tmp_path / "elsewhere.pt")
    else:
        bad.write_bytes(junk)
    with pytest.raises(ValueError, match="undecodable" if junk else "unreadable"):
        reply_decode.read_reply_file(str(bad), 1 << 20, mapped=True)


@pytest.mark.parametrize("target,sandboxed,mapped", [
    (start.REPLAY_TARGET, True, True), (start.REPLAY_TARGET, False, False),
    (start.WORKER_TARGET, True, False),
])
def test_only_a_sandboxed_replays_reply_is_mapped(monkeypatch, target, sandboxed, mapped):
    """The candidate's own worker wrote its reply file: copied, never mapped (a mapped file its
    writer could still truncate would fault the parent); so is an unsandboxed replay's."""
    seen = []

    class Proc:
        def cleanup(self):
            pass

    proc = Proc()
    proc.sandboxed = sandboxed
    monkeypatch.setattr(run_job, "_watch", lambda *args: seen.append(args[-1]) or run_job.Outcome(None, "crash"))
    output = type("Output", (), {"close": lambda self: ("", 0)})()
    run_job.run_job(target, {"device": "cpu"}, 5.0, 0, None, started=(None, proc, output))
    assert seen == [mapped]
