"""Worker processes: start, feed one job, enforce time and memory, decode the reply safely.

Every candidate gets a fresh process forked from a forkserver that has already imported torch and
triton (a second or more saved per candidate), so no candidate's module-level effects can reach
another's. The parent enforces a hard wall-clock timeout and polls the worker's resident memory;
a worker that hangs, exceeds memory, crashes (segfault, ``os._exit``, CUDA fault) or sends a
malformed reply is killed and reported as a failure with its reason, never skipped. Replies are
decoded with ``torch.load(weights_only=True)``: tensors and plain containers only.
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

# triton is preloaded only where CUDA workers are expected: the interpreter (CPU) must see
# TRITON_INTERPRET=1 before triton's own @jit helpers are defined, so CPU workers import it late.
PRELOAD_CPU = ["torch", "hawkeye_env.judge.worker"]
PRELOAD_CUDA = PRELOAD_CPU + ["triton"]
POLL_S = 0.05
KILL_GRACE_S = 2.0


@dataclass
class Outcome:
    """What came back from one worker: a decoded reply, or why there is none."""

    reply: dict | None
    failure: str = ""  # "", "timeout", "memory", "crash", "bad_reply"
    detail: str = ""
    wall_s: float = 0.0
    violations: list = field(default_factory=list)  # last progress report, kept on failure


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


def run_in_worker(job: dict, timeout_s: float, memory_limit_bytes: int) -> Outcome:
    """Run ``job`` in a fresh worker process and return its decoded reply or failure.

    The worker writes the candidate into a private temporary folder that is removed here once the
    worker is gone, whatever happened to it.
    """
    from hawkeye_env.judge.worker import serve

    with tempfile.TemporaryDirectory(prefix="hawkeye-candidate-") as workdir:
        return _run(serve, {**job, "workdir": workdir}, timeout_s, memory_limit_bytes)


def _run(serve, job: dict, timeout_s: float, memory_limit_bytes: int) -> Outcome:
    with _START_LOCK:
        ctx = _context(job["device"])
        parent, child = ctx.Pipe(duplex=True)
        proc = ctx.Process(target=serve, args=(child, job["device"], memory_limit_bytes), daemon=True)
        start = time.monotonic()
        with _main_hidden():
            proc.start()
    child.close()
    violations: list = []

    def failed(kind: str, detail: str) -> Outcome:
        return Outcome(None, kind, detail, time.monotonic() - start, violations)

    try:
        parent.send_bytes(json.dumps(job).encode("utf-8"))
        deadline = start + timeout_s
        while True:
            if parent.poll(POLL_S):
                try:
                    message = _decode(parent.recv_bytes())
                except (EOFError, OSError):
                    proc.join(KILL_GRACE_S)
                    return failed("crash", _describe_exit(proc.exitcode))
                except ValueError as exc:
                    return failed("bad_reply", str(exc))
                if message.get("kind") == "final":
                    return Outcome(message, "", "", time.monotonic() - start, violations)
                violations = list(message.get("violations", []))
                continue
            if not proc.is_alive():
                proc.join(KILL_GRACE_S)
                return failed("crash", _describe_exit(proc.exitcode))
            if time.monotonic() > deadline:
                return failed("timeout", f"no verdict within {timeout_s:.0f} s")
            if memory_limit_bytes and _rss_bytes(proc.pid) > memory_limit_bytes:
                return failed("memory", f"worker exceeded {memory_limit_bytes / 2**30:.1f} GiB of host memory")
    finally:
        parent.close()
        _kill(proc)


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
