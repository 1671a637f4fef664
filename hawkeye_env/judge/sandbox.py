"""Worker processes: start, feed one job, enforce time and memory, decode the reply safely.

Every candidate gets a fresh process forked from a forkserver that has already imported torch and
triton (a second or more saved per candidate), so no candidate's module-level effects can reach
another's. The parent enforces a hard wall-clock timeout and polls the worker's resident memory;
a worker that hangs, exceeds memory, crashes (segfault, ``os._exit``, CUDA fault) or sends a
malformed reply is killed and reported as a failure with its reason, never skipped. Replies are
decoded with ``torch.load(weights_only=True)``: tensors and plain containers only.

On a GPU the job names its lane (``lanes.py``): the worker asks the parent for the GPU's lock,
shared before it first touches CUDA and exclusive before it times (a ``lane_request`` message,
answered with ``{"go": true}`` once granted); the parent holds the lock and drops it when the worker
has replied or died. The clock is paused while the worker waits for its lane: waiting for another
candidate's timing never counts against this candidate's timeout. The wait itself is bounded
(``LANE_WAIT_FACTOR``); a worker that waits longer fails with ``lane_wait``, an infrastructure
failure that the batch API retries.
"""

from __future__ import annotations

import io
import json
import multiprocessing as mp
import os
import signal
import sys
import tempfile
import threading
import time
import types
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch

from hawkeye_env.judge.lanes import Lane, LaneClaim

# triton is preloaded only where CUDA workers are expected: the interpreter (CPU) must see
# TRITON_INTERPRET=1 before triton's own @jit helpers are defined, so CPU workers import it late.
PRELOAD_CPU = ["torch", "hawkeye_env.judge.worker"]
PRELOAD_CUDA = PRELOAD_CPU + ["triton"]
POLL_S = 0.05
KILL_GRACE_S = 2.0
# While a lane request is pending the parent re-tries the lock every 5 ms: a timed section holds
# the GPU for about a second (50 iterations of ~0.1-1 ms plus a 0.2 s warm-up, timing.py), so a
# 5 ms grant latency costs under 1% of it; the 50 ms idle poll would cost ~5%.
LANE_POLL_S = 0.005
# A worker may wait for its lane up to 4x its own timeout in total: enough for the timed sections
# of a handful of other workers on the same GPU (each bounded by their own timeout), short enough
# that a lock held by a wedged process elsewhere on the host fails the batch with a reason.
LANE_WAIT_FACTOR = 4.0


@dataclass
class Outcome:
    """What came back from one worker: a decoded reply, or why there is none."""

    reply: dict | None
    failure: str = ""  # "", "timeout", "memory", "crash", "bad_reply", "lane_wait"
    detail: str = ""
    wall_s: float = 0.0
    violations: list = field(default_factory=list)  # last progress report, kept on failure
    transfer: dict = field(default_factory=dict)  # final reply: size in MiB, receive+decode seconds
    lane_wait_s: float = 0.0  # time spent waiting for the GPU lock (not counted against the timeout)


_GO = json.dumps({"go": True}).encode("utf-8")

_FORKSERVER: mp.context.BaseContext | None = None
_FORKSERVER_PID = 0
_PRELOADED_TRITON = False
# Serialises context creation and process starts: ``_main_hidden`` swaps ``sys.modules["__main__"]``
# and two threads swapping at once could leave the placeholder in place.
_START_LOCK = threading.Lock()


def _context(device: str) -> mp.context.BaseContext:
    """The forkserver context; a spawn context for CPU jobs when the server preloaded triton, and in
    a process forked from the one that started the forkserver (its children are not ours to wait
    for: e.g. a gymnasium AsyncVectorEnv worker forked after the parent judged something)."""
    global _FORKSERVER, _FORKSERVER_PID, _PRELOADED_TRITON
    if _FORKSERVER is not None and _FORKSERVER_PID != os.getpid():
        return mp.get_context("spawn")
    if _FORKSERVER is None:
        _FORKSERVER_PID = os.getpid()
        _PRELOADED_TRITON = torch.cuda.is_available()
        _FORKSERVER = mp.get_context("forkserver")
        _FORKSERVER.set_forkserver_preload(PRELOAD_CUDA if _PRELOADED_TRITON else PRELOAD_CPU)
    if device == "cpu" and _PRELOADED_TRITON:
        return mp.get_context("spawn")
    return _FORKSERVER


@contextmanager
def _main_hidden():
    """Start children without re-importing the caller's ``__main__`` script.

    multiprocessing re-runs the parent's main script in every forkserver child so that pickled
    functions defined there resolve; the worker's entry point lives in this package, so that
    re-run is never needed, and it would re-execute any unguarded user script.
    """
    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        if main is not None:
            sys.modules["__main__"] = main


def _rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "worker did not exit"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"worker was killed by {name}"
    return f"worker exited with code {code} before replying"


def run_in_worker(job: dict, timeout_s: float, memory_limit_bytes: int, lane: Lane | None = None) -> Outcome:
    """Run ``job`` in a fresh worker process and return its decoded reply or failure.

    The worker writes the candidate into a private temporary folder that is removed here once the
    worker is gone, whatever happened to it. ``lane`` (CUDA) picks the worker's GPU, its compile
    cache folders and the lock its timed section takes; without one the worker uses the current
    GPU and the process's default caches, unlocked.
    """
    from hawkeye_env.judge.worker import serve

    if lane is not None:
        job = {**job, "lane": lane.job_fields()}
    with tempfile.TemporaryDirectory(prefix="hawkeye-candidate-") as workdir:
        return _run(serve, {**job, "workdir": workdir}, timeout_s, memory_limit_bytes, lane)


def _run(serve, job: dict, timeout_s: float, memory_limit_bytes: int, lane: Lane | None = None) -> Outcome:
    with _START_LOCK:
        ctx = _context(job["device"])
        parent, child = ctx.Pipe(duplex=True)
        proc = ctx.Process(target=serve, args=(child, job["device"], memory_limit_bytes), daemon=True)
        start = time.monotonic()
        with _main_hidden():
            proc.start()
    child.close()
    violations: list = []
    claim = LaneClaim(lane.new_lock() if lane is not None else None)

    def failed(kind: str, detail: str) -> Outcome:
        return Outcome(None, kind, detail, time.monotonic() - start, violations, lane_wait_s=claim.total_wait_s())

    try:
        parent.send_bytes(json.dumps(job).encode("utf-8"))
        while True:
            if claim.grant():
                parent.send_bytes(_GO)
            if parent.poll(LANE_POLL_S if claim.pending else POLL_S):
                received = time.monotonic()
                try:
                    payload = parent.recv_bytes()
                    message = _decode(payload)
                except (EOFError, OSError):
                    proc.join(KILL_GRACE_S)
                    return failed("crash", _describe_exit(proc.exitcode))
                except ValueError as exc:
                    return failed("bad_reply", str(exc))
                if message.get("kind") == "final":
                    transfer = {"reply_mb": len(payload) / 2**20, "receive_decode_s": time.monotonic() - received}
                    return Outcome(message, "", "", time.monotonic() - start, violations, transfer,
                                   claim.total_wait_s())
                if message.get("kind") == "lane_request":
                    try:
                        claim.request(str(message.get("mode")))
                    except ValueError as exc:
                        return failed("bad_reply", str(exc))
                    continue
                violations = list(message.get("violations", []))
                continue
            if not proc.is_alive():
                proc.join(KILL_GRACE_S)
                return failed("crash", _describe_exit(proc.exitcode))
            if claim.pending and claim.total_wait_s() > LANE_WAIT_FACTOR * timeout_s:
                return failed("lane_wait", f"GPU {lane.gpu} stayed busy for {claim.total_wait_s():.0f} s")
            if time.monotonic() - start - claim.total_wait_s() > timeout_s:
                return failed("timeout", f"no verdict within {timeout_s:.0f} s")
            if memory_limit_bytes and _rss_bytes(proc.pid) > memory_limit_bytes:
                return failed("memory", f"worker exceeded {memory_limit_bytes / 2**30:.1f} GiB of host memory")
    finally:
        parent.close()
        _kill(proc)
        claim.close()


def _decode(payload: bytes) -> dict:
    """A worker message: ``torch.load(weights_only=True)`` of a dict, or ``ValueError``."""
    try:
        message = torch.load(io.BytesIO(payload), weights_only=True)
    except Exception as exc:
        raise ValueError(f"undecodable worker reply: {exc}") from exc
    if not isinstance(message, dict):
        raise ValueError(f"worker reply is {type(message).__name__}, not a dict")
    return message


def _kill(proc) -> None:
    if proc.is_alive():
        proc.kill()
    proc.join(KILL_GRACE_S)
    if proc.is_alive() and proc.pid:
        try:
            os.kill(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
