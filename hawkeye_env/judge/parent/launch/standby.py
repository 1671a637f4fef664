"""Standby workers: worker processes started before their candidate arrives.

A fresh worker's start-up (the torch modules its first calls import, Triton's runtime and
launcher, and on a GPU the CUDA context and cuBLAS handles: ``warmup.py``) lies on its candidate's
critical path; a standby worker pays it while no candidate waits. On the CPU interpreter (two
cores) the warm verdict median went from 1.03 s to 0.49 s for ``gemm_bf16`` and from 1.18 s to
0.39 s for ``softmax_fp32`` (``bench/results/standby-cpu/judge-cpu-standby-{off,on}-2026-11-30.json``). It is
started like every worker (a fresh interpreter in its own sandbox, ``spawn.py``), sets up its lane
(GPU pinning, cache folders, the shared lane lock around its first CUDA calls; the trusted parent
serves that lock protocol from a background thread), runs the trusted warm-up, drops the lock and
waits for exactly one job. Nothing of any candidate has run in it; after its
job it exits like every worker, so one candidate per process still holds (docs/threat-model.md #6, #7).

``POOL.take`` hands out a standby set up for ``(device, lane, memory limit)`` when one exists and
starts replacements, keeping ``POOL.depth`` started ahead: one, or as many as a batch has
candidates in flight per lane (``pool.judge_batch`` holds that depth while it runs), so the pool's
standbys follow the number of candidates in flight (its first candidates, finding none, start
fresh workers); ``$HAWKEYE_STANDBY_DEPTH`` caps that number (1: one standby per key). An idle
standby holds a CUDA context (about 0.5 GiB of GPU memory) and no lane lock, so it never delays a
timed section.
A standby that fails its warm-up or is not ready within ``READY_TIMEOUT_S`` is discarded and its
candidate gets a fresh worker. Standbys are on by default; ``HAWKEYE_STANDBY=0`` turns them off.

Like every worker, a standby's stdout and stderr go to its own file (``output_capture.WorkerOutput``), so
a pool of standbys warming up never writes into the judge's console or log. The warm-up is
trusted: its output is dropped once the standby says ``ready`` (the worker flushes before), so
the candidate's feedback shows only what was printed after its job arrived; a standby that fails
its warm-up keeps the end of it in ``failure``.
"""

from __future__ import annotations

import atexit
import os
import threading
import time
from contextlib import contextmanager

from hawkeye_env.judge.parent.lanes import Lane, LaneClaim
from hawkeye_env.judge.parent.launch import isolation, start
from hawkeye_env.judge.parent.validate.reply_decode import decode_message

ENV_FLAG = "HAWKEYE_STANDBY"
DEPTH_ENV = "HAWKEYE_STANDBY_DEPTH"
# A warm-up is seconds of work (warmup.py) plus any wait for the shared lane lock behind timed
# sections (each bounded by its own timeout); 120 s means something is wrong, and the candidate is
# better served by a fresh worker.
READY_TIMEOUT_S = 120.0


def depth_cap() -> int:
    """``$HAWKEYE_STANDBY_DEPTH`` as a positive integer (the most standbys kept ahead per key),
    else no cap."""
    value = os.environ.get(DEPTH_ENV, "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else 1 << 30


def enabled(device: str) -> bool:
    """Standbys are used (on ``device``) unless ``$HAWKEYE_STANDBY`` turns them off."""
    return os.environ.get(ENV_FLAG, "").strip().lower() not in ("0", "false", "no", "off")


class Standby:
    """One started worker in warm-up or waiting for its job; ``handoff`` gives its connection,
    process and output file."""

    def __init__(self, serve, device: str, lane: Lane | None, memory_limit_bytes: int):
        self.started = time.monotonic()
        fields = start.lane_fields(serve, lane) if lane is not None else {}
        writable = start.lane_writable(serve, lane)
        self.conn, self.proc, self.output = start.start_process(serve, device, memory_limit_bytes, fields,
                                                                       writable=writable)
        self.failure = ""
        self.setup_s = 0.0
        self.ready_after_s = 0.0  # from the start to ``ready`` (the whole start-up, imports included)
        self.ready = threading.Event()
        threading.Thread(target=self._warm, args=(lane,), daemon=True, name="hawkeye-standby").start()

    def _warm(self, lane: Lane | None) -> None:
        """Serve the worker's lane requests until it says ``ready`` (or fails)."""
        claim = LaneClaim(lane.new_lock() if lane is not None else None)
        began = time.monotonic()
        try:
            while True:
                if claim.grant():
                    self.conn.send_bytes(start.GO)
                if self.conn.poll(start.LANE_POLL_S if claim.pending else start.POLL_S):
                    message = decode_message(self.conn.recv_bytes())
                    kind = message.get("kind")
                    if kind == "lane_request":
                        claim.request(message.get("mode"))
                    elif kind == "ready":
                        self.setup_s = float(message.get("setup_s", 0.0))
                        self.ready_after_s = time.monotonic() - self.started
                        self.output.drop()  # the trusted warm-up's output: no candidate's
                        return
                    else:
                        raise ValueError(f"unexpected message {kind!r} during warm-up")
                elif not self.proc.is_alive():
                    raise RuntimeError(start.describe_exit(self.proc.exitcode))
                elif time.monotonic() - began > READY_TIMEOUT_S:
                    raise TimeoutError(f"not ready within {READY_TIMEOUT_S:.0f} s")
        except Exception as exc:  # noqa: BLE001 - any failure discards the standby
            self.failure = f"{type(exc).__name__}: {exc}"
            output = self.discard()
            if output:
                self.failure += f"\nwarm-up output (end):\n{output[-2000:].rstrip()}"
        finally:
            claim.close()
            self.ready.set()

    def handoff(self) -> tuple:
        """``(connection, process, output)`` for ``sandbox.run_job``, which then owns and ends the
        process and deletes its output file."""
        return self.conn, self.proc, self.output

    def discard(self) -> str:
        """End the process and delete its output file; returns what it printed (bounded)."""
        try:
            self.conn.close()
        except OSError:
            pass
        self.proc.cleanup()
        return self.output.close()[0]


def _key(serve, device: str, lane: Lane | None, memory_limit_bytes: int) -> tuple:
    """What a standby must match to take a job: its entry point, device, lane, memory limit and
    the OS sandbox it was started in (``$HAWKEYE_SANDBOX`` may change between batches: a standby
    started sandboxed must not serve an unsandboxed job, nor the other way round)."""
    return (start.target_name(serve), device, lane, memory_limit_bytes, isolation.mode())


class StandbyPool:
    """Standbys per ``(serve, device, lane, memory limit, sandbox mode)``; thread-safe, reset in a
    forked child.

    Each key keeps ``depth`` standbys started ahead (1 unless a batch asks for more with
    ``holding``): with one, a burst of candidates takes each standby moments after the previous
    take started it and waits for most of its warm-up (4.5-5 s of imports per process with eight
    verdicts in flight on the H200, two processes per GPU verdict; ``bench.search``). A take
    hands out the oldest ready standby, else the oldest, and tops the queue up by at most
    ``TOP_UP`` new ones, so a burst does not start every process at once."""

    TOP_UP = 2

    def __init__(self):
        self._idle: dict[tuple, list[Standby]] = {}
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._depths: list[int] = []  # one entry per open ``holding``

    @property
    def depth(self) -> int:
        """Standbys each key keeps started ahead: the largest open ``holding``, else 1, at most
        ``$HAWKEYE_STANDBY_DEPTH`` (each idle standby holds a CUDA context on a GPU)."""
        return max(1, min(max(self._depths, default=1), depth_cap()))

    @contextmanager
    def holding(self, depth: int):
        """Keep ``depth`` standbys per key started ahead while the block runs (a batch with
        ``depth`` candidates in flight per lane); on exit, idle standbys beyond the depth still
        wanted are ended."""
        with self._lock:
            self._depths.append(max(1, int(depth)))
        try:
            yield self
        finally:
            with self._lock:
                self._depths.remove(max(1, int(depth)))
                extra = [q.pop() for q in self._idle.values() for _ in range(max(0, len(q) - self.depth))]
            for standby in extra:
                standby.discard()

    def _top_up(self, queue: list, serve, device: str, lane: Lane | None, memory_limit_bytes: int) -> None:
        """Start standbys until ``queue`` holds ``depth``, at most ``TOP_UP`` now (lock held)."""
        for _ in range(min(self.TOP_UP, self.depth - len(queue))):
            try:
                queue.append(Standby(serve, device, lane, memory_limit_bytes))
            except OSError:  # no process could be started (limits): the next take tries again
                return

    def take(self, serve, device: str, lane: Lane | None, memory_limit_bytes: int) -> Standby | None:
        """A ready standby for this lane, or None (none was started yet, or it failed); starts
        replacements either way."""
        key = _key(serve, device, lane, memory_limit_bytes)
        with self._lock:
            if self._pid != os.getpid():  # a forked child: those processes are not its children
                self._idle, self._pid = {}, os.getpid()
            queue = self._idle.setdefault(key, [])
            ready = next((i for i, x in enumerate(queue) if x.ready.is_set()), 0)
            standby = queue.pop(ready) if queue else None
            self._top_up(queue, serve, device, lane, memory_limit_bytes)
        if standby is None:
            return None
        standby.ready.wait(READY_TIMEOUT_S + 5.0)
        if standby.failure or not standby.proc.is_alive():
            standby.discard()
            return None
        return standby

    def prime(self, serve, device: str, lane: Lane | None, memory_limit_bytes: int) -> None:
        """Start standbys for this key up to ``depth`` (``TOP_UP`` at most), so they warm up while the
        caller does other work (a GPU verdict primes its replay while its candidate's worker records)."""
        key = _key(serve, device, lane, memory_limit_bytes)
        with self._lock:
            if self._pid != os.getpid():
                self._idle, self._pid = {}, os.getpid()
            self._top_up(self._idle.setdefault(key, []), serve, device, lane, memory_limit_bytes)

    def idle(self) -> int:
        """Standbys started and not yet taken (in this process)."""
        with self._lock:
            return sum(len(q) for q in self._idle.values()) if self._pid == os.getpid() else 0

    def shutdown(self) -> None:
        """End every idle standby (at exit, and where a caller wants the GPU memory back)."""
        with self._lock:
            queues = list(self._idle.values()) if self._pid == os.getpid() else []
            self._idle = {}
        for queue in queues:
            for standby in queue:
                standby.discard()


POOL = StandbyPool()
atexit.register(POOL.shutdown)

__all__ = ["ENV_FLAG", "POOL", "READY_TIMEOUT_S", "Standby", "StandbyPool", "enabled"]
