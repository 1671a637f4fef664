"""Starting sandboxed processes: every worker, and a command run to completion.

``launch`` starts ``python -m hawkeye_env.judge.sandboxed.common.entry`` for a ``"module:function"`` target
in a new scratch folder (``scratch.py``), inside ``bwrap`` (``isolation.bwrap_command``) unless the
sandbox is off, and returns a ``WorkerProcess``: the ``multiprocessing.Process`` calls the judge
uses, over the ``Popen``. ``run_command`` runs a plain command line the same way and waits for it
(``hawkeye units verify --candidate``). All processes are started from one long-lived launcher
thread, so ``--die-with-parent`` ties each sandbox to the judge's process, not to the thread that
asked for it.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass

from hawkeye_env.judge.parent.launch import forkserver
from hawkeye_env.judge.parent.launch.isolation import BWRAP, OFF, bwrap_command, mode, passed_env, require
from hawkeye_env.judge.parent.launch.scratch import new_scratch
from hawkeye_env.registration import JUDGE_PROCESS_ENV


@dataclass
class _Launch:
    """One start request for the launcher thread: the command line, its environment (None: the
    one the command line sets up, as ``bwrap --clearenv`` does), the descriptors it inherits, and
    whether it gets a session (and process group) of its own."""

    argv: list[str]
    env: dict[str, str] | None
    fds: tuple[int, ...]
    new_session: bool
    stdout: int | None = None


class _Launcher:
    """One long-lived thread that starts every worker. ``--die-with-parent`` (``PR_SET_PDEATHSIG``)
    fires when the *thread* that started ``bwrap`` ends; starting them all from this thread, which
    lives as long as the judge's process, ties each sandbox to the process and not to the batch
    thread that asked for it."""

    def __init__(self) -> None:
        self._requests: queue.Queue = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._pid = os.getpid()

    def start(self, request: _Launch) -> subprocess.Popen:
        with self._lock:
            if self._thread is None or not self._thread.is_alive() or self._pid != os.getpid():
                self._requests, self._pid = queue.Queue(), os.getpid()
                self._thread = threading.Thread(target=self._serve, daemon=True, name="hawkeye-launcher")
                self._thread.start()
            requests = self._requests
        answer: queue.Queue = queue.Queue(maxsize=1)
        requests.put((request, answer))
        result = answer.get()
        if isinstance(result, BaseException):
            raise result
        return result

    def _serve(self) -> None:
        requests = self._requests
        while True:
            request, answer = requests.get()
            try:
                answer.put(subprocess.Popen(
                    request.argv, env=request.env, pass_fds=request.fds, stdin=subprocess.DEVNULL,
                    stdout=request.stdout, close_fds=True, start_new_session=request.new_session,
                    preexec_fn=_die_with_this_thread,
                ))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                answer.put(exc)


def _die_with_this_thread() -> None:
    """In the new child before ``exec``: ``PR_SET_PDEATHSIG`` SIGKILL, so the outer ``bwrap`` (and
    with it the sandbox, through ``--die-with-parent``) is killed when the launcher thread, that
    is the judge's process, dies; ``bwrap``'s own flag covers only the processes inside."""
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except OSError:
        pass


PR_SET_PDEATHSIG = 1
_LAUNCHER = _Launcher()


class WorkerProcess:
    """A started worker: the ``multiprocessing.Process`` calls the judge uses (``is_alive``,
    ``kill``, ``join``, ``exitcode``, ``pid``) over a ``Popen`` of ``bwrap`` (or of the plain
    interpreter when the sandbox is off), and the worker's scratch folder, removed by
    ``cleanup``."""

    def __init__(self, popen: subprocess.Popen, scratch: str, sandboxed: bool):
        self._popen = popen
        self.scratch = scratch
        self.sandboxed = sandboxed
        self.pid = popen.pid

    @property
    def exitcode(self) -> int | None:
        """The worker's exit code, negative for a signal as ``multiprocessing`` reports it (``bwrap``
        exits with 128 + the signal number when its command was killed by one)."""
        code = self._popen.poll()
        if self.sandboxed and code is not None and code > 128:
            return -(code - 128)
        return code

    def is_alive(self) -> bool:
        return self._popen.poll() is None

    def join(self, timeout: float | None = None) -> None:
        try:
            self._popen.wait(timeout)
        except subprocess.TimeoutExpired:
            pass

    def kill(self) -> None:
        """SIGKILL: the sandbox's namespace dies with ``bwrap``; unsandboxed, its process group."""
        if self._popen.poll() is not None:
            return
        try:
            if self.sandboxed:
                self._popen.kill()
            else:
                os.killpg(self._popen.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def cleanup(self) -> None:
        """Kill if still running, reap, and remove the scratch folder."""
        self.kill()
        self.join(5.0)
        shutil.rmtree(self.scratch, ignore_errors=True)


def launch(target: str, args: list, fds: tuple[int, ...], device: str, writable: tuple[str, ...] = (),
           hidden: tuple[str, ...] = (), env: dict[str, str] | None = None):
    """Start ``target`` (``"module:function"``) as ``function(conn, *args)`` in a new worker
    (``worker_entry.py``), in the sandbox unless it is off: a fork of a pre-imported zygote joined
    to a sandbox of its own (``forkserver.py``; a ``forkserver.ForkedWorker``) where the fork
    server runs, else a fresh interpreter (a ``WorkerProcess``). ``fds`` are the descriptors the
    worker inherits: ``(connection, output)``. ``writable`` folders are bound read-write besides
    the new scratch folder (trusted baseline workers' caches); ``hidden`` paths are masked."""
    sandbox_mode = require()
    scratch = new_scratch()
    base = {"PYTHONDONTWRITEBYTECODE": "1", JUDGE_PROCESS_ENV: "1", **(env or {})}
    extra = {"HOME": scratch, "TMPDIR": scratch, "CUDA_CACHE_PATH": os.path.join(scratch, "nv"),
             "TRITON_CACHE_DIR": os.path.join(scratch, "triton"), **base}
    argv = [sys.executable, "-m", "hawkeye_env.judge.sandboxed.common.entry", "--conn", str(fds[0]),
            "--output", str(fds[1]) if len(fds) > 1 else "-1", "--target", target,
            "--scratch", scratch, "--args", json.dumps(args)]
    try:
        if sandbox_mode == BWRAP:
            if forkserver.enabled():
                forked = _forked(target, args, fds, device, writable, hidden, passed_env(base), passed_env(extra),
                                 scratch)
                if forked is not None:
                    forkserver.SERVER.count("forked")
                    return forked
            forkserver.SERVER.count("fresh")
            command = bwrap_command(argv, scratch, device, writable, passed_env(extra), hidden)
            popen = _LAUNCHER.start(_Launch(command, None, fds, new_session=False))
        else:
            popen = _LAUNCHER.start(_Launch(argv, {**os.environ, **passed_env(extra)}, fds, new_session=True))
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return WorkerProcess(popen, scratch, sandbox_mode == BWRAP)


def _start_plain(argv: list[str], env: dict[str, str], fds: tuple[int, ...]) -> subprocess.Popen:
    """A zygote, from the launcher thread (it dies with the judge), in a session of its own."""
    return _LAUNCHER.start(_Launch(argv, env, fds, new_session=True))


def _start_holder(argv: list[str], env: None, fds: tuple[int, ...], stdout: int) -> subprocess.Popen:
    """A holder's ``bwrap``, from the launcher thread, its command's standard output to ``stdout``."""
    return _LAUNCHER.start(_Launch(argv, env, fds, new_session=False, stdout=stdout))


def _forked(target: str, args: list, fds: tuple[int, ...], device: str, writable: tuple[str, ...],
            hidden: tuple[str, ...], zygote_env: dict[str, str], worker_env: dict[str, str],
            scratch: str) -> forkserver.ForkedWorker | None:
    """A worker forked from the zygote for ``(target, device, zygote_env)`` into a holder sandbox
    built for ``scratch``, or None where the fork server cannot give one (a fresh worker then)."""
    zygote = forkserver.SERVER.zygote(target, device, zygote_env, _start_plain)
    if zygote is None:
        return None
    try:
        holder, ns_fds = forkserver.start_holder(scratch, device, writable, worker_env, hidden, _start_holder)
    except forkserver.ForkFailed:
        return None
    status_r, status_w = os.pipe()
    request = {"scratch": scratch, "env": worker_env, "args": args, "output": len(fds) > 1}
    try:
        zygote.fork(request, [status_w, fds[0], fds[1] if len(fds) > 1 else fds[0], *ns_fds])
    except (forkserver.ForkFailed, OSError) as exc:
        os.close(status_r)
        holder.kill()
        holder.wait()
        if not isinstance(exc, forkserver.ForkFailed):  # a retired zygote is no failure: a fresh worker this once
            forkserver.SERVER.mark_failed(target, device, zygote_env, f"the zygote took no request: {exc}")
        return None
    finally:
        os.close(status_w)
        for fd in ns_fds:
            os.close(fd)
    try:
        return forkserver.ForkedWorker(holder, status_r, scratch)
    except forkserver.ForkFailed as exc:
        forkserver.SERVER.mark_failed(target, device, zygote_env, str(exc))
        return None


def run_command(argv: list[str], env: dict[str, str], timeout_s: float,
                device: str = "cpu") -> subprocess.CompletedProcess:
    """Run ``argv`` to completion in the sandbox (a fresh scratch folder, removed afterwards; the
    environment filtered as for workers, then ``env``'s ``PASSED_ENV`` entries and
    ``TRITON_INTERPRET``); returns the ``subprocess.CompletedProcess`` with text output. Used where
    a candidate runs outside the judge's worker protocol (``hawkeye units verify --candidate``)."""
    require()
    scratch = new_scratch()
    extra = {"HOME": scratch, "TMPDIR": scratch, "TRITON_CACHE_DIR": os.path.join(scratch, "triton"),
             **{k: v for k, v in env.items() if k == "TRITON_INTERPRET"}}
    try:
        if mode() == OFF:
            return subprocess.run(argv, env={**os.environ, **passed_env(extra)}, cwd=scratch, capture_output=True,
                                  text=True, timeout=timeout_s, check=False)
        command = bwrap_command(argv, scratch, device, (), passed_env(extra))
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, check=False)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


__all__ = ["WorkerProcess", "launch", "run_command"]
