"""One job in a worker process: feed it, enforce time and memory, serve its lane, read its reply.

Every candidate gets a fresh worker process in its own OS sandbox (``isolation.py``: bubblewrap
namespaces, a read-only file system but for its private scratch folder), started by name
(``start.WORKER_TARGET``) so the parent never imports the worker's code; no candidate's
effects can reach another's verdict, the store or the parent. The parent enforces a hard wall-clock
timeout and polls the resident memory of the worker's whole process tree; a worker that hangs,
exceeds memory, crashes (segfault, ``os._exit``, CUDA fault) or sends a malformed reply is killed
with everything it started and reported as a failure with its reason, never skipped. Replies are
decoded with ``torch.load(weights_only=True)``: tensors and plain containers only
(``reply_decode.py``), and then checked against the parent's plan (``reply_check.py``). The final
reply (the candidate's outputs: 224 MiB for ``gemm_bf16`` at its GPU shapes) is written to a file
the parent names in the worker's scratch folder, on ``/dev/shm`` when it has room, and read by the
parent once the worker is dead (a sandboxed replay's file is mapped rather than copied,
``reply_decode.read_reply_file``); small messages and the fallback go through the socket. By default
the worker is a standby that set itself up before the job existed (``standby.py``).

On a GPU the job names its lane (``lanes.py``): the worker asks the parent for the GPU's lock,
shared before it first touches CUDA and exclusive before it times (a ``lane_request`` message,
answered with ``{"go": true}`` once granted); the parent holds the lock and drops it when the
worker has replied or died. The clock is paused while the worker waits for its lane: waiting for
another candidate's timing never counts against this candidate's timeout. The wait itself is
bounded (``LANE_WAIT_FACTOR``); a worker that waits longer fails with ``lane_wait``, an
infrastructure failure that the batch API retries.

A worker's standard output and error (file descriptors 1 and 2, so C extensions, Triton and any
subprocess such as ``ptxas`` too) never reach the judge's console or log (``WorkerOutput``):
``start.start_process`` creates a file in the system temporary folder (mode 0600, on disk
rather than ``/dev/shm``), unlinks it at once and hands the worker a duplicate of its descriptor,
the way a ``Connection`` is handed over; the worker points descriptors 1 and 2 at it (and 0 at
``/dev/null``) before anything of ``serve`` runs. The file has no name, so nothing is left behind
whatever ends the worker or the judge, and a candidate cannot swap it for a link or a FIFO. The
parent keeps the first ``OUTPUT_HEAD_BYTES`` and the last ``OUTPUT_TAIL_BYTES``, closes its
descriptor once the worker is dead (reply, timeout, crash) and returns the text in
``Outcome.output_tail``; for a candidate that failed, ``run_in_worker`` appends it, labelled, to
the failure's detail or the worker's error, where the verdict's error and feedback show it (a ptxas
error, a print). It is plain text: sanitised, never parsed, and it decides nothing. A size limit
(``RLIMIT_FSIZE``) would also hit the reply file and Triton's cache, so the parent bounds the file
instead: while the worker runs, every poll folds a file past ``OUTPUT_FILE_MAX_BYTES`` into the
kept head and tail and punches a hole over what it read, so what the worker writes meanwhile stays
(``output_capture.punch_hole``; where the file system cannot, it truncates, and a write landing
between the read and the truncation is lost in the omitted middle). A standby's trusted warm-up
output is dropped when it says ``ready`` (``standby.py``), so a candidate's feedback holds only
what was printed after its job arrived.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass, field

from hawkeye_env.judge.parent.lanes import Lane, LaneClaim
from hawkeye_env.judge.parent.launch import host_memory, standby
from hawkeye_env.judge.parent.launch.output_capture import (
    OUTPUT_FILE_MAX_BYTES,
    OUTPUT_HEAD_BYTES,
    OUTPUT_TAIL_BYTES,
    MessageReader,
    WorkerOutput,
)
from hawkeye_env.judge.parent.launch.start import (
    GO,
    KILL_GRACE_S,
    LANE_POLL_S,
    POLL_S,
    REPLAY_TARGET,
    WORKER_TARGET,
    describe_exit,
    kill,
    lane_fields,
    lane_writable,
    start_process,
    target_name,
)
from hawkeye_env.judge.parent.validate.reply_decode import ForgedMessage, decode_message, read_reply_file
from hawkeye_env.judge.shared.wire import Job

# A worker's messages: progress reports and lane requests are a few hundred bytes and come a few
# times per trial; a recording worker's reply (its launch plans) a few MB; final replies with
# outputs are written to the reply file. More than MAX_MESSAGES messages, or one frame above
# MAX_MESSAGE_BYTES, is a worker flooding the parent: a frame is held whole in the parent's memory
# while it arrives, and once more as the message (``output_capture.MessageReader``). A worker whose
# reply file cannot be written (a full disk) sends its reply through the socket, within this bound.
MAX_MESSAGES = 10_000
MAX_MESSAGE_BYTES = 64 << 20
# A reply file with no GPU-shape outputs: a CPU worker's (CPU shapes hold at most about 16k
# elements, ``kernelbench.shapes.CPU_ELEMENT_BUDGET``: a few MB of outputs) and a recording worker's
# (its launch plans and cubins). Such a job's ``reply_limit_bytes``; the parent reads the whole file,
# so a larger bound would let a candidate hold that much of the parent's memory per verdict.
SMALL_REPLY_BYTES = 256 << 20
# A worker may wait for its lane up to 4x its own timeout in total: enough for the timed sections
# of a handful of other workers on the same GPU (each bounded by their own timeout), short enough
# that a lock held by a wedged process elsewhere on the host fails the batch with a reason.
LANE_WAIT_FACTOR = 4.0
# The worker's memory (a walk of its process tree in /proc and of its scratch folder) is read at
# most this often. The watch loop turns every LANE_POLL_S (5 ms) while a lane request waits, and
# with eight verdicts in flight on one GPU requests wait for their lane (BENCHMARKS.md, "Throughput
# on the search policy's batch"); the parent is one Python process serving every worker, and a
# memory read at every turn of eight waiting workers would take most of a core of its interpreter.
# At the idle poll's cadence the limit is still enforced
# (``test_lanes.test_a_lane_wait_does_not_multiply_the_memory_checks``).
MEMORY_POLL_S = POLL_S
REPLY_FILE = "reply.pt"
# Stages of a worker's reply whose error gets the candidate's output appended (run_in_worker).
OUTPUT_STAGES = ("compile_error", "runtime_error", "no_source")
# Set to a folder, every worker profiles its job with cProfile and writes the statistics there.
PROFILE_ENV = "HAWKEYE_PROFILE_DIR"


@dataclass
class Outcome:
    """What came back from one worker: a decoded reply, or why there is none."""

    reply: dict | None
    failure: str = ""  # "", "timeout", "memory", "crash", "bad_reply", "forged", "lane_wait"
    detail: str = ""
    wall_s: float = 0.0
    violations: list = field(default_factory=list)  # last progress report, kept on failure
    transfer: dict = field(default_factory=dict)  # final reply: size in MiB, receive+decode seconds
    lane_wait_s: float = 0.0  # time spent waiting for the GPU lock (not counted against the timeout)
    output_tail: str = ""  # the worker's stdout+stderr, bounded (WorkerOutput.close); plain text
    output_bytes: int = 0  # bytes the worker wrote to them (a lower bound once the file was folded)
    start_s: float = 0.0  # from asking for a process to holding one: a standby's wait to be ready, or a fresh start
    standby_ready_s: float = 0.0  # the standby's own start-up, from its start to ready (0: a fresh process)



def run_in_worker(job: Job, timeout_s: float, memory_limit_bytes: int, lane: Lane | None = None,
                  serve: str = WORKER_TARGET) -> Outcome:
    """Run ``job`` in a fresh sandboxed worker process and return its decoded reply or failure.

    The worker writes the candidate into its private scratch folder (``spawn.launch``), which
    is removed here once the worker is gone, whatever happened to it; its final reply comes back
    as a file in that folder. ``lane`` (CUDA) picks the worker's GPU and the lock its timed
    section takes; without one the worker uses the current GPU, unlocked. Where standby workers
    are on (``standby.py``; by default) the job goes to a worker that has already set up this
    lane, and a replacement is started for the next job. What the worker printed comes back in
    ``Outcome.output_tail`` and, for a failed candidate, in the failure's detail or the reply's
    error (``with_output``). ``serve`` is ``WORKER_TARGET`` (a candidate) or ``REPLAY_TARGET``
    (the trusted replay of its launch plans).
    """
    if lane is not None:
        job = {**job, "lane": lane_fields(serve, lane)}
    ready, asked = None, time.monotonic()
    if standby.enabled(job["device"]):
        ready = standby.POOL.take(serve, job["device"], lane, memory_limit_bytes)
    started = ready.handoff() if ready is not None else start_process(
        serve, job["device"], memory_limit_bytes, writable=lane_writable(serve, lane))
    start_s = time.monotonic() - asked
    scratch = started[1].scratch
    job = {**job, "workdir": scratch, "reply_path": os.path.join(scratch, REPLY_FILE)}
    if os.environ.get(PROFILE_ENV):
        job["profile_dir"] = os.path.join(scratch, "profile")
    profile_to = os.path.abspath(os.environ[PROFILE_ENV]) if job.get("profile_dir") else None
    outcome = with_output(run_job(serve, job, timeout_s, memory_limit_bytes, lane, started, profile_to=profile_to))
    outcome.start_s = start_s
    outcome.standby_ready_s = getattr(ready, "ready_after_s", 0.0) if ready is not None else 0.0
    return outcome


def _copy_profiles(src: str, dest: str) -> None:
    """Copy a worker's cProfile files (regular files only, no links) out of its scratch folder."""
    try:
        os.makedirs(dest, exist_ok=True)
        for entry in os.scandir(src):
            if entry.is_file(follow_symlinks=False) and entry.name.endswith(".prof"):
                shutil.copyfile(entry.path, os.path.join(dest, entry.name), follow_symlinks=False)
    except OSError:
        pass


def output_label(outcome: Outcome) -> str:
    """The heading of a worker's output in a verdict's error."""
    if outcome.output_bytes > OUTPUT_HEAD_BYTES + OUTPUT_TAIL_BYTES:
        more = " or more" if outcome.output_bytes > OUTPUT_FILE_MAX_BYTES else ""
        return (f"candidate output (stdout and stderr, {outcome.output_bytes} bytes{more}; the first "
                f"{OUTPUT_HEAD_BYTES} and last {OUTPUT_TAIL_BYTES} shown):")
    return "candidate output (stdout and stderr):"


def with_output(outcome: Outcome) -> Outcome:
    """Append the worker's output, labelled, where a failed candidate's verdict shows it: the
    failure's detail (no reply), or the error of a reply in ``OUTPUT_STAGES``. Text only: it is
    never parsed and decides nothing."""
    text = outcome.output_tail.rstrip()
    if not text:
        return outcome
    block = f"{output_label(outcome)}\n{text}"
    if outcome.reply is None:
        outcome.detail = f"{outcome.detail}\n{block}" if outcome.detail else block
    elif outcome.reply.get("stage") in OUTPUT_STAGES and isinstance(outcome.reply.get("error", ""), str):
        error = outcome.reply.get("error", "")
        outcome.reply["error"] = f"{error}\n{block}" if error else block
    return outcome


def run_job(serve, job: Job, timeout_s: float, memory_limit_bytes: int, lane: Lane | None = None,
            started: tuple | None = None, writable: tuple[str, ...] = (), profile_to: str | None = None) -> Outcome:
    """Send ``job`` to a worker (``started``: a ready standby's ``(conn, process, output)``; else a
    new ``serve`` process, with ``writable`` folders bound read-write) and watch it until its final
    reply, a failure or the timeout. The worker is dead when this returns, its output file read
    (``Outcome.output_tail``) and closed, and its scratch folder removed, whatever happened;
    ``profile_to`` receives its cProfile files first (``PROFILE_ENV``)."""
    if started is None:
        started = start_process(serve, job["device"], memory_limit_bytes, writable=writable)
    parent, proc, output = started
    try:
        # the trusted replay's reply file, in a sandbox that died with it: mapped, not copied
        mapped = target_name(serve) == REPLAY_TARGET and getattr(proc, "sandboxed", False)
        outcome = _watch(parent, proc, output, job, timeout_s, memory_limit_bytes, lane, mapped)
    finally:
        text, total = output.close()
        if profile_to and job.get("profile_dir"):
            kill(proc)
            _copy_profiles(job["profile_dir"], profile_to)
        proc.cleanup()
    outcome.output_tail, outcome.output_bytes = text, total
    return outcome


def _watch(parent, proc, output: WorkerOutput | None, job: dict, timeout_s: float, memory_limit_bytes: int,
           lane: Lane | None, mapped: bool = False) -> Outcome:
    """``run_job``'s loop: serve lane requests, keep progress reports and the output file bounded,
    decode the final reply (its file mapped, ``read_reply_file``, when ``mapped``); the process is
    killed on the way out."""
    start = time.monotonic()
    next_memory_check = start
    violations: list = []
    claim = LaneClaim(lane.new_lock() if lane is not None else None)

    def failed(kind: str, detail: str) -> Outcome:
        return Outcome(None, kind, detail, time.monotonic() - start, violations, lane_wait_s=claim.total_wait_s())

    try:
        try:
            parent.send_bytes(json.dumps(job).encode("utf-8"))
        except OSError:  # e.g. a standby that died while it waited: a retryable crash
            proc.join(KILL_GRACE_S)
            return failed("crash", describe_exit(proc.exitcode))
        reader = MessageReader(parent.fileno(), MAX_MESSAGE_BYTES)
        messages = 0
        while True:
            if output is not None:
                output.bound()
            if claim.grant():
                parent.send_bytes(GO)
            # The limits are checked on every pass: a flood of messages cannot starve them.
            check_memory = bool(memory_limit_bytes) and time.monotonic() >= next_memory_check
            if check_memory:
                next_memory_check = time.monotonic() + MEMORY_POLL_S
            over = _over_limit(proc, claim, lane, time.monotonic() - start, timeout_s,
                               memory_limit_bytes if check_memory else 0)
            if over:
                return failed(*over)
            payload, gone = _poll(reader, proc, LANE_POLL_S if claim.pending else POLL_S)
            if gone:
                return failed(*gone)
            if payload is None:
                continue
            messages += 1
            if messages > MAX_MESSAGES:
                return failed("bad_reply", f"more than {MAX_MESSAGES} messages from one worker")
            received = time.monotonic()
            try:
                message = decode_message(payload)
            except ValueError as exc:  # ForgedMessage is one
                return failed("forged" if isinstance(exc, ForgedMessage) else "bad_reply", str(exc))
            if message.get("kind") == "final":
                try:
                    message, size = _final_reply(message, len(payload), proc, job, memory_limit_bytes, mapped)
                except ValueError as exc:  # ForgedMessage is one
                    return failed("forged" if isinstance(exc, ForgedMessage) else "bad_reply", str(exc))
                transfer = {"reply_mb": size / 2**20, "receive_decode_s": time.monotonic() - received}
                return Outcome(message, "", "", time.monotonic() - start, violations, transfer,
                               claim.total_wait_s())
            problem, reported = _lane_or_progress(message, claim)
            if problem:
                return failed("bad_reply", problem)
            if reported is not None:
                violations = reported
    finally:
        parent.close()
        kill(proc)
        claim.close()


def _lane_or_progress(message: dict, claim: LaneClaim) -> tuple[str, list | None]:
    """Serve a message other than the final reply: a lane request goes to ``claim``; a progress
    report gives its violations (the items are checked later). Returns ``(why the message is
    malformed or "", the reported violations or None)``."""
    if message.get("kind") == "lane_request":
        try:
            claim.request(message.get("mode"))
        except ValueError as exc:
            return str(exc), None
        return "", None
    reported = message.get("violations", [])
    if not isinstance(reported, list):  # honest workers send lists
        return "a progress report's violations are not a list", None
    return "", list(reported)


def _poll(reader: MessageReader, proc, wait_s: float) -> tuple[bytes | None, tuple[str, str] | None]:
    """``(the next message's payload or None, None)``, or ``(None, (failure, detail))`` when the
    worker is gone (its connection closed, or it exited with nothing left to read) or sent a
    malformed frame. Liveness is read before the socket: a worker found dead had sent all it ever
    sends before the read, so its final reply, written just before it exits, is never mistaken for
    silence (read after, a reply landing between the two was lost as a crash)."""
    alive = proc.is_alive()
    try:
        payload = reader.poll(wait_s)
    except (EOFError, OSError):
        proc.join(KILL_GRACE_S)
        return None, ("crash", describe_exit(proc.exitcode))
    except ValueError as exc:
        return None, ("bad_reply", str(exc))
    if payload is None and not alive:
        proc.join(KILL_GRACE_S)
        return None, ("crash", describe_exit(proc.exitcode))
    return payload, None


def _final_reply(message: dict, size: int, proc, job: dict, memory_limit_bytes: int,
                 mapped: bool) -> tuple[dict, int]:
    """The final reply and its size in bytes: ``message`` itself (``size`` bytes), or the reply
    file it announces, read once the worker is killed (nothing may write the file while it is
    read). Raises ``ValueError`` (``ForgedMessage``) as ``read_reply_file``."""
    if message.get("reply_file") and job.get("reply_path"):
        kill(proc)
        limits = [x for x in (job.get("reply_limit_bytes"), memory_limit_bytes) if x]
        return read_reply_file(job["reply_path"], min(limits, default=0), mapped)
    return message, size


def _over_limit(proc, claim: LaneClaim, lane: Lane | None, elapsed_s: float, timeout_s: float,
                memory_limit_bytes: int) -> tuple[str, str] | None:
    """``(failure, detail)`` when the worker has waited too long for its lane, run past its
    timeout (time waiting for the lane not counted) or, with ``memory_limit_bytes``, holds more
    host memory than that; else None."""
    if claim.pending and claim.total_wait_s() > LANE_WAIT_FACTOR * timeout_s:
        return "lane_wait", f"GPU {lane.gpu} stayed busy for {claim.total_wait_s():.0f} s"
    if elapsed_s - claim.total_wait_s() > timeout_s:
        return "timeout", f"no verdict within {timeout_s:.0f} s"
    held = host_memory.worker_bytes(proc) if memory_limit_bytes else 0
    if held >= host_memory.UNCOUNTED:
        return "memory", (f"the worker's scratch folder holds more than {host_memory.MAX_SCRATCH_ENTRIES} entries "
                          "or a folder the judge cannot read: its memory cannot be counted")
    if memory_limit_bytes and held > memory_limit_bytes:
        return "memory", (f"worker exceeded {memory_limit_bytes / 2**30:.1f} GiB of host memory "
                          "(its processes and its scratch folder)")
    return None


__all__ = ["LANE_WAIT_FACTOR", "MAX_MESSAGES", "MEMORY_POLL_S", "OUTPUT_STAGES", "PROFILE_ENV", "REPLY_FILE",
           "SMALL_REPLY_BYTES", "Outcome", "output_label", "run_in_worker", "run_job", "with_output"]
