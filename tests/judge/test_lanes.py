"""The GPU lane lock: timed sections never overlap, correctness phases may, a queued timing is not
starved, and the parent (never the worker) holds the lock through the sandbox's lane protocol.

No GPU is needed: the lock is a file lock, and the protocol is exercised with a stand-in worker
entry point that asks for the lane exactly as ``worker.serve`` does on CUDA.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import threading
import time

from hawkeye_env.judge.parent.lanes import EXCLUSIVE, SHARED, Lane, LaneClaim, LaneLock
from hawkeye_env.judge.parent.launch import run_job
from hawkeye_env.judge.sandboxed.candidate.worker import _lane_request, _send

HOLD_S = 0.4


def _overlaps(intervals: list[tuple[float, float]]) -> bool:
    intervals = sorted(intervals)
    return any(b0 < a1 for (_, a1), (b0, _) in zip(intervals, intervals[1:]))


def _hold_exclusive(lock_dir: str, queue) -> None:
    lock = LaneLock("gpu-test", lock_dir)
    lock.acquire(EXCLUSIVE)
    start = time.time()
    time.sleep(HOLD_S)
    end = time.time()
    lock.release()
    queue.put((start, end))


def test_exclusive_holds_never_overlap_across_processes(tmp_path):
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_hold_exclusive, args=(str(tmp_path), queue)) for _ in range(2)]
    for p in procs:
        p.start()
    intervals = [queue.get(timeout=30) for _ in procs]
    for p in procs:
        p.join(10)
    assert not _overlaps(intervals), intervals
    assert max(e for _, e in intervals) - min(s for s, _ in intervals) >= 2 * HOLD_S


def test_exclusive_holds_never_overlap_across_threads(tmp_path):
    intervals: list[tuple[float, float]] = []

    def hold() -> None:
        with LaneLock("gpu-test", tmp_path).hold(EXCLUSIVE):
            start = time.monotonic()
            time.sleep(HOLD_S)
            intervals.append((start, time.monotonic()))

    threads = [threading.Thread(target=hold) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(intervals) == 3 and not _overlaps(intervals), intervals


def test_readers_share_writer_excludes_and_queued_writer_blocks_new_readers(tmp_path):
    a, b, w = (LaneLock("gpu-test", tmp_path) for _ in range(3))
    assert a.try_acquire(SHARED) and b.try_acquire(SHARED)  # correctness phases overlap
    b.release()
    assert not w.try_acquire(EXCLUSIVE)  # a reader still holds the GPU
    assert not b.try_acquire(SHARED)  # the queued writer holds the gate: no new reader
    a.release()
    assert w.try_acquire(EXCLUSIVE) and w.mode == EXCLUSIVE
    assert not b.try_acquire(SHARED)
    w.release()
    assert b.try_acquire(SHARED)
    b.release()


def test_upgrade_from_shared_to_exclusive_does_not_deadlock(tmp_path):
    a, b = LaneLock("gpu-test", tmp_path), LaneLock("gpu-test", tmp_path)
    assert a.try_acquire(SHARED) and b.try_acquire(SHARED)
    assert not a.try_acquire(EXCLUSIVE)  # a queued (its shared hold dropped), b still reading
    assert not b.try_acquire(EXCLUSIVE)  # b gave up its shared hold too; a holds the gate
    assert a.try_acquire(EXCLUSIVE)
    a.release()
    assert b.try_acquire(EXCLUSIVE)
    b.release()


def test_different_gpus_do_not_block_each_other(tmp_path):
    a, b = LaneLock("gpu-0", tmp_path), LaneLock("gpu-1", tmp_path)
    assert a.try_acquire(EXCLUSIVE) and b.try_acquire(EXCLUSIVE)
    a.release()
    b.release()


def test_claim_counts_waiting_time_and_releases(tmp_path):
    holder = LaneLock("gpu-test", tmp_path)
    holder.acquire(EXCLUSIVE)
    claim = LaneClaim(LaneLock("gpu-test", tmp_path))
    claim.request(SHARED)
    assert not claim.grant()
    time.sleep(0.2)
    holder.release()
    assert claim.grant() and claim.pending is None
    assert claim.waited_s >= 0.2
    claim.close()
    assert holder.try_acquire(EXCLUSIVE)  # the claim's shared hold is gone
    holder.release()


def _lane_worker(conn, device, memory_limit_bytes) -> None:
    """Stand-in for ``worker.serve`` on CUDA: shared lane, "trials", exclusive lane, "timing"."""
    job = json.loads(conn.recv_bytes().decode("utf-8"))
    _lane_request(conn, "shared")
    time.sleep(0.05)
    _lane_request(conn, "exclusive")
    start = time.time()
    time.sleep(job["hold_s"])
    end = time.time()
    _lane_request(conn, "none")
    _send(conn, {"kind": "final", "timed": [start, end], "pid": os.getpid()})
    conn.close()
    os._exit(0)


def test_sandbox_serialises_timed_sections_and_pauses_the_clock_while_waiting(tmp_path):
    """Three workers on one lane: their timed sections never overlap, and every worker gets its
    reply within a 12 s timeout although the last one finishes more than 12 s after it started
    (three timed sections of 5 s after a sandboxed interpreter's start-up, which takes seconds on
    a loaded 2-core machine), because waiting for the lane does not count against it."""
    lane = Lane(gpu=0, lock_id="gpu-test", lock_dir=str(tmp_path))
    outcomes: list[run_job.Outcome] = []

    def run() -> None:
        job = {"device": "cpu", "hold_s": 5.0}
        outcomes.append(run_job.run_job(_lane_worker, job, timeout_s=12.0, memory_limit_bytes=0, lane=lane))

    threads = [threading.Thread(target=run) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(outcomes) == 3
    assert all(o.reply is not None for o in outcomes), [(o.failure, o.detail) for o in outcomes]
    intervals = [tuple(o.reply["timed"]) for o in outcomes]
    assert not _overlaps(intervals), intervals
    assert max(o.lane_wait_s for o in outcomes) >= 5.0  # someone waited a whole timed section
    assert max(o.wall_s for o in outcomes) > 12.0
    assert LaneLock("gpu-test", tmp_path).try_acquire(EXCLUSIVE)  # everything was released


def _dies_holding_the_lane(conn, device, memory_limit_bytes) -> None:
    conn.recv_bytes()
    _lane_request(conn, "exclusive")
    os._exit(3)


def test_lane_is_released_when_the_worker_dies(tmp_path):
    lane = Lane(gpu=0, lock_id="gpu-test", lock_dir=str(tmp_path))
    outcome = run_job.run_job(_dies_holding_the_lane, {"device": "cpu"}, timeout_s=30, memory_limit_bytes=0, lane=lane)
    assert outcome.failure == "crash" and "exited with code 3" in outcome.detail
    assert LaneLock("gpu-test", tmp_path).try_acquire(EXCLUSIVE)


def test_a_lane_wait_does_not_multiply_the_memory_checks(tmp_path, monkeypatch):
    """While a lane request waits the loop turns every 5 ms; the worker's memory (a /proc walk in
    the parent) is still read at most every ``MEMORY_POLL_S``, and the limit still holds."""
    lane = Lane(gpu=0, lock_id="gpu-test", lock_dir=str(tmp_path))
    reads = []
    real = run_job.host_memory.worker_bytes
    monkeypatch.setattr(run_job.host_memory, "worker_bytes", lambda proc: reads.append(1) or real(proc))
    holder = LaneLock("gpu-test", str(tmp_path))
    holder.acquire(EXCLUSIVE)
    threading.Timer(6.0, holder.release).start()  # past a sandboxed start-up on a loaded machine
    outcome = run_job.run_job(_lane_worker, {"device": "cpu", "hold_s": 0.1}, timeout_s=30.0,
                              memory_limit_bytes=8 << 30, lane=lane)
    assert outcome.reply is not None and outcome.lane_wait_s >= 1.0, (outcome.failure, outcome.detail)
    assert len(reads) <= outcome.wall_s / run_job.MEMORY_POLL_S + 5, (len(reads), outcome.wall_s)
    assert len(reads) >= 10  # still checked throughout
