"""Starting a worker for an entry point, and the parent's half of its start-up protocol.

A worker is started by name (``WORKER_TARGET``, ``REPLAY_TARGET``, ``baselines.BASELINE_TARGET``),
so the parent never imports the worker's modules (``hawkeye_env/judge/__init__.py`` lists which
module runs where). ``start_process`` gives it a socket to the parent and a ``WorkerOutput`` file
for its stdout and stderr (``output_capture.py``) and starts it in the sandbox
(``spawn.launch``); ``lane_fields`` and ``lane_writable`` say what of its GPU lane it learns and
may write. Used by ``sandbox.run_job`` (one job, watched to the end) and by ``standby.py``
(workers started before their job).
"""

from __future__ import annotations

import json
import os
import signal
import socket
from multiprocessing.connection import Connection

from hawkeye_env.judge.parent.lanes import Lane
from hawkeye_env.judge.parent.launch import spawn
from hawkeye_env.judge.parent.launch.output_capture import WorkerOutput

POLL_S = 0.05
# While a lane request is pending the parent re-tries the lock every 5 ms: a timed section holds
# the GPU for about a second (50 iterations of ~0.1-1 ms plus a 0.2 s warm-up, timing.py), so a
# 5 ms grant latency costs under 1% of it; the 50 ms idle poll would cost ~5%.
LANE_POLL_S = 0.005
KILL_GRACE_S = 2.0
# The parent's answer to a lane request once the lock is granted.
GO = json.dumps({"go": True}).encode("utf-8")
# The candidate worker's entry point, named rather than imported: the parent never imports the
# worker's modules (``hawkeye_env/judge/__init__.py`` lists which module runs where).
WORKER_TARGET = "hawkeye_env.judge.sandboxed.candidate.worker:serve"
# The trusted replay of a candidate's launch plans (``replay.py``): no candidate code runs in it.
REPLAY_TARGET = "hawkeye_env.judge.sandboxed.replay.replay:serve"


def target_name(serve) -> str:
    """``"module:function"`` of a worker entry point: ``serve`` itself when it is a string, else
    the module-level function's module and qualified name."""
    return serve if isinstance(serve, str) else f"{serve.__module__}:{serve.__qualname__}"


def candidate_lane_fields(lane: Lane) -> dict:
    """A candidate's (or standby's) lane fields: its GPU only. The lane's shared compile caches
    are for trusted baseline workers; a candidate compiles into its private scratch folder
    (``spawn.launch``), so nothing it writes reaches another candidate's kernels."""
    return {"gpu": lane.gpu}


def lane_fields(serve, lane: Lane) -> dict:
    """What a process started for ``serve`` learns of its lane: a candidate its GPU only
    (``candidate_lane_fields``); the trusted replay its GPU and the lane's compile caches, where
    Triton's launchers, built from validated signatures, are shared between replays."""
    if target_name(serve) == REPLAY_TARGET:
        return lane.job_fields()
    return candidate_lane_fields(lane)


def lane_writable(serve, lane: Lane | None) -> tuple[str, ...]:
    """Folders bound read-write into a process started for ``serve``: the lane's compile caches
    for the trusted replay, nothing for a candidate worker."""
    if lane is None or lane.cache_dir is None or target_name(serve) != REPLAY_TARGET:
        return ()
    os.makedirs(lane.cache_dir, exist_ok=True)
    return (lane.cache_dir,)


def start_process(serve, device: str, memory_limit_bytes: int, *extra,
                  writable: tuple[str, ...] = ()) -> tuple[Connection, spawn.WorkerProcess, WorkerOutput]:
    """Start ``serve(conn, device, memory_limit_bytes, *extra)`` in a new sandboxed worker
    (``spawn.launch``) whose stdout and stderr go to a new ``WorkerOutput``; returns
    ``(parent_conn, process, output)``. ``serve`` is a ``"module:function"`` name or a
    module-level function (``target_name``), imported only in the worker; ``extra`` must be JSON.
    ``writable`` folders are bound read-write (trusted baseline workers' compile caches only).
    Whoever ends the process cleans it up and closes the output (``sandbox.run_job``,
    ``standby.Standby.discard``)."""
    output = WorkerOutput.create()
    parent_sock, child_sock = socket.socketpair()
    try:
        fds = (child_sock.fileno(),) + ((output.fd,) if output.fd is not None else ())
        proc = spawn.launch(target_name(serve), [device, memory_limit_bytes, *extra], fds, device, writable=writable)
    except BaseException:
        parent_sock.close()
        output.close()
        raise
    finally:
        child_sock.close()
    return Connection(parent_sock.detach()), proc, output


def describe_exit(code: int | None) -> str:
    """Why a worker that did not reply is gone, from its exit code (negative: a signal)."""
    if code is None:
        return "worker did not exit"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"worker was killed by {name}"
    return f"worker exited with code {code} before replying"


def kill(proc) -> None:
    """SIGKILL the worker (with its sandbox, everything it started) and reap it."""
    proc.kill()
    proc.join(KILL_GRACE_S)


__all__ = ["GO", "KILL_GRACE_S", "LANE_POLL_S", "POLL_S", "REPLAY_TARGET", "WORKER_TARGET", "candidate_lane_fields",
           "describe_exit", "kill", "lane_fields", "lane_writable", "start_process", "target_name"]
