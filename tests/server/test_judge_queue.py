"""``JudgeQueue`` on scripted verdicts (``bench.scripted_judge``): capacity, verdicts handed over
as they arrive, round-robin with a running bound per client, the per-client bound, and withdrawal."""

from __future__ import annotations

import time

import pytest

from bench.scripted_judge import TASK, ScriptedJudge, scripted_reply
from hawkeye_env.edits import to_candidate
from hawkeye_env.judge.parent.store import ResultStore, source_hash
from hawkeye_env.server.judge_queue import JudgeQueue, QueueFull


def source(seconds: float, stage: str, tag: str) -> str:
    return to_candidate(None, scripted_reply(seconds, stage, tag))


@pytest.fixture
def make_queue(tmp_path):
    queues = []

    def make(workers: int, **kwargs) -> JudgeQueue:
        store = ResultStore(tmp_path / f"v{len(queues)}.sqlite3")
        queues.append(JudgeQueue(ScriptedJudge(store), "cpu", workers, **kwargs))
        return queues[-1]

    yield make
    for q in queues:
        q.close()
        q.evaluator.store.close()


def stored(queue: JudgeQueue, src: str) -> bool:
    return queue.evaluator.store.get_verdict(TASK, source_hash(src), "cpu", {"judge": "scripted"}, {}) is not None


def test_a_fast_verdict_in_a_batch_with_a_slow_one_comes_back_first(make_queue):
    queue = make_queue(workers=2)
    slow = queue.submit(TASK, source(1.0, "correct", "slow"))
    start = time.monotonic()
    fast = queue.submit(TASK, source(0.01, "incorrect", "fast"))
    assert fast.result(10).stage.value == "incorrect"
    assert time.monotonic() - start < 0.7 and not slow.done()
    assert slow.result(10).stage.value == "correct"


def test_a_client_flooding_slow_candidates_runs_on_half_the_slots(make_queue):
    queue = make_queue(workers=2)
    flood = [queue.submit(TASK, source(1.2, "correct", f"a{i}"), client="a") for i in range(2)]
    time.sleep(0.1)  # both of "a"'s candidates are in: one judged, one waiting for "a"'s running slot
    start = time.monotonic()
    assert queue.judge(TASK, source(0.01, "correct", "b"), client="b").stage.value == "correct"
    assert time.monotonic() - start < 0.8
    assert flood[1].cancel() and flood[0].result(10).correct  # the second never started
    assert queue.status()["most_in_flight"] == 2


def test_a_named_client_is_bounded_and_the_process_itself_is_not(make_queue):
    queue = make_queue(workers=1, max_per_client=2)
    for i in range(2):
        queue.submit(TASK, source(0.3, "correct", f"a{i}"), client="a")
    with pytest.raises(QueueFull):
        queue.submit(TASK, source(0.3, "correct", "a2"), client="a")
    unnamed = [queue.submit(TASK, source(0.0, "correct", f"n{i}")) for i in range(5)]
    assert all(f.result(10).correct for f in unnamed)
    status = queue.status()
    assert status["refused"] == 1 and status["submitted"] == 7


def test_a_withdrawn_candidate_is_never_judged_nor_stored(make_queue):
    queue = make_queue(workers=1)
    running = queue.submit(TASK, source(0.5, "correct", "first"), client="a")
    time.sleep(0.1)
    waiting_src = source(0.0, "correct", "withdrawn")
    waiting = queue.submit(TASK, waiting_src, client="b")
    assert waiting.cancel()
    timed_out_src = source(0.0, "correct", "timed-out")
    with pytest.raises(TimeoutError):
        queue.judge(TASK, timed_out_src, timeout=0.05, client="c")
    assert running.result(10).correct and not running.cancel()
    time.sleep(0.2)
    status = queue.status()
    assert status["cancelled"] == 2 and status["judged"] == 1 and status["queued"] == 0 and status["clients"] == 0
    assert stored(queue, to_candidate(None, scripted_reply(0.5, "correct", "first")))
    assert not stored(queue, waiting_src) and not stored(queue, timed_out_src)


def test_a_candidate_given_up_while_judged_lends_its_slot_and_is_still_stored(make_queue):
    queue = make_queue(workers=1)
    slow_src = source(1.0, "correct", "given-up")
    slow = queue.submit(TASK, slow_src, client="a")
    time.sleep(0.1)
    assert not queue.give_up(slow)  # being judged: it runs on, its slot lent
    start = time.monotonic()
    assert queue.judge(TASK, source(0.01, "correct", "next"), client="b").correct
    assert time.monotonic() - start < 0.7
    assert slow.result(10).correct and stored(queue, slow_src)
    status = queue.status()
    assert status["given_up"] == 1 and status["most_in_flight"] == 2 and status["in_flight"] == 0
    assert not queue.give_up(slow)  # judged already: nothing more to lend


def test_every_verdict_is_its_own_and_capacity_holds(make_queue):
    queue = make_queue(workers=3, max_per_client=None)
    jobs = [(f"c{i % 4}" if i % 4 else None, source(0.05 * (i % 3), ("correct", "incorrect")[i % 2], f"j{i}"))
            for i in range(12)]
    futures = [queue.submit(TASK, src, client=client) for client, src in jobs]
    verdicts = [f.result(10) for f in futures]
    assert [v.source_hash for v in verdicts] == [source_hash(src) for _, src in jobs]
    assert [v.stage.value for v in verdicts] == [("correct", "incorrect")[i % 2] for i in range(12)]
    status = queue.status()
    assert status["judged"] == 12 and status["most_in_flight"] <= 3 and status["in_flight"] == 0
