"""Process plumbing shared by every judge process started through ``worker_entry``: candidate
workers (``worker.serve``) and trusted replays (``replay.serve``).

Setting the process up for its device without touching CUDA (``prepare_lane``), taking the GPU's
shared lane lock before the first CUDA call (``take_gpu``), a standby's trusted warm-up before
any job exists (``warm_standby``), framed ``torch.save`` messages (``send``), the final reply
through a file (``send_final``), and ``serve_jobs``, the one-job loop every such process runs.
"""

from __future__ import annotations

import io
import os
import resource
import sys
import time

import torch
import torch.utils.deterministic


def deterministic(on: bool) -> None:
    """torch's deterministic-algorithms flag (``warn_only``), set without
    ``torch.use_deterministic_algorithms``, whose import of ``torch._inductor.config`` was 1.0 s
    of a fresh process's 2.6 s of imports on CPU (``python -X importtime``). Only graphs compiled
    by inductor read that copy of the flag, and the processes that set it compile none (the
    ``torch.compile`` baseline runs in a baseline-only worker)."""
    torch._C._set_deterministic_algorithms(on, warn_only=True)


def setup_process(device: str, memory_limit_bytes: int) -> None:
    # One intra-op thread: a judge process's own work is GPU launches, copies and serialisation,
    # and the host's cores are shared by every worker, replay and standby in flight (12 of 16 busy
    # on average with eight verdicts in flight on one H200, ``bench.search``).
    torch.set_num_threads(1)
    if device == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"
        from hawkeye_env.judge.sandboxed.common.interpreter.bounds import install_memory_bounds
        from hawkeye_env.judge.sandboxed.common.interpreter.fixes import install_interpreter_fixes

        install_interpreter_fixes()
        install_memory_bounds()  # a kernel's pointers reach only its launch's tensor arguments
        if memory_limit_bytes:
            resource.setrlimit(resource.RLIMIT_AS, (memory_limit_bytes, memory_limit_bytes))
    torch.set_grad_enabled(False)
    # Poisoned allocations: with deterministic algorithms on (only around candidate calls),
    # torch.empty fills floats with NaN and integers with their max value (threat model #1, #16).
    torch.utils.deterministic.fill_uninitialized_memory = True


def send(conn, message: dict) -> None:
    buf = io.BytesIO()
    torch.save(message, buf)
    conn.send_bytes(buf.getvalue())


def pin_gpu(gpu: int) -> int:
    """Show this worker only visible GPU ``gpu`` (an index into the parent's visible devices), as
    device 0, and return the index to use. Called before CUDA is initialised, so the candidate
    cannot reach another GPU, where its work would escape this GPU's timer and synchronisation
    (docs/threat-model.md #3). If CUDA were already initialised the variable would be ignored: then the
    GPU is only selected."""
    if torch.cuda.is_initialized():
        return gpu
    visible = [s.strip() for s in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if s.strip()]
    os.environ["CUDA_VISIBLE_DEVICES"] = visible[gpu] if gpu < len(visible) else str(gpu)
    return 0


def lane_request(conn, mode: str) -> None:
    """Ask the parent for the GPU lock in ``mode`` and wait until it says go."""
    import json

    send(conn, {"kind": "lane_request", "mode": mode})
    answer = json.loads(conn.recv_bytes().decode("utf-8"))
    if not answer.get("go"):
        raise RuntimeError(f"lane {mode} refused: {answer}")


def prepare_lane(device: str, memory_limit_bytes: int, lane_info: dict) -> int | None:
    """Set the process up for ``device`` and its lane without touching CUDA: cache folders,
    interpreter or GPU pinning. Returns the GPU index to select (None: the default)."""
    os.environ.update({str(k): str(v) for k, v in (lane_info.get("env") or {}).items()})
    setup_process(device, memory_limit_bytes)
    if device == "cuda" and lane_info.get("gpu") is not None:
        return pin_gpu(int(lane_info["gpu"]))
    return None


def take_gpu(conn, device: str, index: int | None):
    """On CUDA, wait for the shared lane lock, then create the CUDA context on GPU ``index``.
    Returns ``(lane, wait_s)``: the function that asks the parent for a lock mode, and the
    seconds spent waiting for it."""
    if device != "cuda":
        return (lambda mode: None), 0.0
    lane = lambda mode: lane_request(conn, mode)  # noqa: E731
    waiting = time.monotonic()
    lane("shared")
    wait_s = time.monotonic() - waiting
    torch.cuda.init()
    if index is not None:
        torch.cuda.set_device(index)
    return lane, wait_s


def enter_lane(conn, device: str, memory_limit_bytes: int, lane_info: dict):
    """``prepare_lane`` then ``take_gpu``: the shared lane lock is held before the first CUDA
    call. Returns ``(lane, wait_s)``."""
    return take_gpu(conn, device, prepare_lane(device, memory_limit_bytes, lane_info))


def warm_standby(conn, device: str, memory_limit_bytes: int, standby_lane: dict):
    """A standby's set-up before any job exists (``warmup.py``): host imports with no lock held,
    then under the shared lock the CUDA context and the device warm-up, giving the lock back
    between steps so a queued timed section goes first; the lock is dropped at the end. Returns
    ``(lane, spent)``: the lock-request function and the seconds of each step and of the lock
    waits, for the verdict's profile."""
    index = prepare_lane(device, memory_limit_bytes, standby_lane)
    # Imported only now: on CPU, prepare_lane has set TRITON_INTERPRET, which triton must see
    # before the warm-up kernel is defined.
    from hawkeye_env.judge.sandboxed.common.warmup import warm_device, warm_host

    cpu = time.process_time()
    spent = {"start_cpu_s": cpu, **warm_host()}
    spent["imports_cpu_s"], cpu = time.process_time() - cpu, time.process_time()
    started = time.monotonic()
    lane, wait_s = take_gpu(conn, device, index)
    spent["context_s"] = time.monotonic() - started - wait_s
    spent["context_cpu_s"] = time.process_time() - cpu
    waits = [wait_s]

    def checkpoint() -> None:
        waiting = time.monotonic()
        lane("shared")
        waits.append(time.monotonic() - waiting)

    spent.update(warm_device(device, checkpoint))
    lane("none")
    spent["lock_wait_s"] = sum(waits)
    return lane, spent


def flush_output() -> None:
    """Push what Python and C stdio buffered to file descriptors 1 and 2 (the worker's output file,
    ``worker_entry.redirect_output``): before ``ready``, after which a standby's warm-up output is
    dropped, and before the final reply, after which the worker is killed."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001 - a candidate may have replaced or closed the stream
            pass
    try:
        import ctypes

        ctypes.CDLL(None).fflush(None)
    except BaseException:  # noqa: BLE001 - best effort
        pass


def send_final(conn, reply: dict, path: str | None) -> None:
    """The final reply: written to ``path`` (a file the parent named, in the candidate's scratch
    folder, on ``/dev/shm`` when it has room) and announced with a small message, so gigabytes of
    GPU-shape outputs and references are written once and read once instead of being copied
    through the pipe in small chunks; through the pipe when there is no path or the file cannot be
    written (a full disk)."""
    if path:
        try:
            torch.save({"kind": "final", **reply}, path)
            send(conn, {"kind": "final", "reply_file": True})
            return
        except OSError:
            try:
                os.unlink(path)
            except OSError:
                pass
    send(conn, {"kind": "final", **reply})


def profiled(run_job, job: dict, report, lane) -> dict:
    """``run_job(job, report, lane)`` under cProfile, its statistics written to ``<profile_dir>/<task>-<pid>.prof``
    (``sandbox.PROFILE_ENV``: a diagnostic of where a verdict's worker time goes, read with
    ``pstats``; written by the candidate's process, so never part of a verdict)."""
    import cProfile

    profiler = cProfile.Profile()
    reply = profiler.runcall(run_job, job, report, lane)
    try:
        os.makedirs(job["profile_dir"], exist_ok=True)
        kind = "replay" if job.get("kind") == "replay" else "record" if job.get("record") else "worker"
        # the candidate's worker and its replay run in PID namespaces of their own: same pids
        profiler.dump_stats(os.path.join(job["profile_dir"], f"{job['task']}-{kind}-{os.getpid()}.prof"))
    except OSError:
        pass
    return reply




def _children_cpu_s() -> float:
    """CPU seconds (user + system) of this process's waited-for children so far (Triton's
    ``ptxas``): with ``time.process_time`` the process's CPU split into start-up and job, a
    diagnostic in ``Verdict.profile`` (the recording worker's figures are the candidate's to forge)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def serve_jobs(conn, device: str, memory_limit_bytes: int, standby_lane: dict | None, run_job) -> None:
    """Process entry point: read one job (JSON bytes), run ``run_job(job, report, lane)``, send
    progress and the final reply as ``torch.save`` bytes, then exit at once so no finaliser
    (``__del__``, atexit) runs.

    On CUDA the process pins its lane's GPU and waits for the shared lane lock before anything
    touches CUDA; the lane's cache folders are set before anything compiles.

    With ``standby_lane`` (``standby.py``) the process sets up that lane before any job exists
    (``warm_standby``: imports unlocked, then its CUDA context, cuBLAS and Triton's runtime under
    the shared lock), drops the lock, says ``ready`` and only then reads its one job, retaking the
    shared lock before it runs it. No candidate code has run in it before that job.

    Its stdout and stderr were pointed at a private file before this runs (``worker_entry``'s
    ``redirect_output``); both are flushed before ``ready`` and before the final reply.
    """
    import json

    started = time.monotonic()
    profile: dict[str, float] = {}
    if standby_lane is not None:
        lane, warmed = warm_standby(conn, device, memory_limit_bytes, standby_lane)
        profile.update({f"standby.{k}": v for k, v in warmed.items()})
        flush_output()
        send(conn, {"kind": "ready", "setup_s": time.monotonic() - started - warmed["lock_wait_s"]})
        try:
            job = json.loads(conn.recv_bytes().decode("utf-8"))
        except (EOFError, OSError):  # discarded unused (the parent's pool shut down): exit quietly
            os._exit(0)
        started = time.monotonic()
        lane("shared")
        lane_wait_s = time.monotonic() - started
        profile["standby"] = 1.0
    else:
        job = json.loads(conn.recv_bytes().decode("utf-8"))
        lane, lane_wait_s = enter_lane(conn, device, memory_limit_bytes, job.get("lane") or {})
    setup_s = time.monotonic() - started - lane_wait_s
    report = lambda violations: send(conn, {"kind": "progress", "violations": violations})  # noqa: E731
    cpu_setup_s, children_setup_s = time.process_time(), _children_cpu_s()
    if job.get("profile_dir"):
        reply = profiled(run_job, job, report, lane)
    else:
        reply = run_job(job, report, lane)
    profile.update({"cpu_setup_s": cpu_setup_s, "cpu_job_s": time.process_time() - cpu_setup_s,
                    "cpu_children_setup_s": children_setup_s,
                    "cpu_children_job_s": _children_cpu_s() - children_setup_s})
    reply["profile"] = {"worker_setup_s": setup_s, "lane_shared_wait_s": lane_wait_s, **profile,
                        **reply.get("profile", {})}
    flush_output()
    send_final(conn, reply, job.get("reply_path"))
    conn.close()
    os._exit(0)


__all__ = ["enter_lane", "lane_request", "send", "serve_jobs", "setup_process"]
