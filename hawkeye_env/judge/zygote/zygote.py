"""A zygote: one trusted interpreter that has imported a worker's modules and forks its workers.

``python -m hawkeye_env.judge.zygote.zygote --control FD --target module:function`` is started by the
trusted parent (``forkserver.py``), outside any sandbox, with the cleared environment every
worker gets (``isolation.passed_env``: no secret of the judge's reaches it, so none is in its
memory). It imports ``--target``'s module (torch and Triton with it: about 1.3 CPU s that a fresh
worker pays, ``profile.worker.cpu_setup_s``), touches no GPU, runs no candidate code, says
``ready`` and then serves fork requests, one per worker, until the parent closes the socket.

A request is a JSON object (``scratch``, ``env``, ``args``, ``output``) with descriptors: the
status pipe, the worker's connection and output file, and the namespaces of a sandbox that a
``bwrap`` holder built for this worker alone (``ns_enter.NAMES``). The zygote forks a *keeper*
that joins those namespaces (``ns_enter.enter``) and forks the worker, which is therefore inside
the sandbox's PID namespace (the holder's ``bwrap`` is its init: killing the holder kills it), its
mount namespace (the read-only root, its own scratch folder, the hidden paths), network, IPC, UTS
and cgroup namespaces, and its inner user namespace (``SANDBOX_UID``). The worker drops every
capability, sets ``no_new_privs`` and a new session (``ns_enter.drop_privileges``), closes every
descriptor but its connection and output, takes the job's environment and scratch folder, and
runs ``worker_entry.run`` as a fresh worker would. The keeper, outside the sandbox and invisible
from it, writes ``pid N`` (the worker's host pid, for the parent's memory watch) and, when the
worker ends, ``exit CODE`` (negative: killed by that signal) to the status pipe; a keeper that
cannot join the sandbox writes ``error ...`` and the parent starts a fresh worker instead.

Each worker is a separate process forked from a zygote in which nothing of any candidate ever ran:
what one candidate does to its process (its memory, its modules) cannot reach the zygote or the
next worker, as with a fresh interpreter (docs/threat-model.md #6, #7).
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import random
import signal
import socket
import sys
import tempfile
import traceback

from hawkeye_env.judge.sandboxed.common import entry
from hawkeye_env.judge.zygote import ns_enter

READY = b"ready"
# Descriptors of one request: status pipe, connection, output file (or a duplicate of the
# connection when there is none), then one per namespace.
MAX_FDS = 3 + len(ns_enter.NAMES)
MAX_REQUEST_BYTES = 1 << 20


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="hawkeye_env.judge.zygote.zygote")
    parser.add_argument("--control", type=int, required=True)
    parser.add_argument("--target", required=True)
    ns = parser.parse_args(argv)
    control = socket.socket(fileno=ns.control)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    ns_enter.die_with_parent(signal.SIGKILL)
    entry.load_target(ns.target)  # the imports every worker of this kind pays
    if "torch" in sys.modules and sys.modules["torch"].cuda.is_initialized():
        raise SystemExit("the zygote initialised CUDA: its forks could not use the GPU")
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # keepers are reaped by the kernel
    control.sendall(READY)
    serve(control, ns.target)


def serve(control: socket.socket, target: str) -> None:
    """Fork a keeper for every request until the parent closes ``control``; then wait for every
    keeper (their workers may still run: a keeper dies with the zygote)."""
    while True:
        try:
            message, fds, _flags, _addr = socket.recv_fds(control, MAX_REQUEST_BYTES, MAX_FDS)
        except OSError:
            message, fds = b"", []
        if not message:
            _wait_for_keepers()
            return
        try:
            request = json.loads(message)
            if len(fds) != MAX_FDS:
                raise ValueError(f"{len(fds)} descriptors, {MAX_FDS} expected")
        except ValueError:
            for fd in fds:
                os.close(fd)
            continue
        if os.fork() == 0:
            control.close()
            _keeper(request, fds, target)  # never returns
        for fd in fds:
            os.close(fd)


def _wait_for_keepers() -> None:
    """With ``SIGCHLD`` ignored, ``wait`` returns once every child has ended (``ECHILD``)."""
    while True:
        try:
            os.wait()
        except ChildProcessError:
            return
        except InterruptedError:
            continue


def _keeper(request: dict, fds: list[int], target: str) -> None:
    """In the keeper: join the sandbox, fork the worker, report its pid and its end."""
    status, conn, output, ns_fds = fds[0], fds[1], fds[2], fds[3:]
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        ns_enter.die_with_parent(signal.SIGKILL)
        ns_enter.enter(dict(zip(ns_enter.NAMES, ns_fds)))
        for fd in ns_fds:
            os.close(fd)
        pid = os.fork()
        if pid == 0:
            _worker(request, conn, output if request.get("output") else None, status, target)
        os.close(conn)
        os.close(output)
        os.write(status, f"pid {pid}\n".encode())
        _, wait_status = os.waitpid(pid, 0)
        os.write(status, f"exit {os.waitstatus_to_exitcode(wait_status)}\n".encode())
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which starts a fresh worker
        try:
            os.write(status, f"error {type(exc).__name__}: {exc}\n".encode(errors="replace"))
        except OSError:
            pass
    finally:
        os._exit(0)


def _close_all_but(keep: set[int]) -> None:
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def _worker(request: dict, conn: int, output: int | None, status: int, target: str) -> None:
    """In the worker, inside the sandbox: drop privileges, take the job's environment and folder,
    run ``worker_entry.run``; exits as an interpreter would (1 on an uncaught exception)."""
    code = 1
    try:
        ns_enter.die_with_parent(signal.SIGKILL)
        os.close(status)
        _close_all_but({conn} | ({output} if output is not None else set()))
        os.chdir(request["scratch"])
        os.environ.clear()
        os.environ.update(request["env"])
        tempfile.tempdir = None
        random.seed()  # the zygote's generators are every fork's: reseed from the kernel's entropy
        if "numpy" in sys.modules:
            sys.modules["numpy"].random.seed()
        ns_enter.drop_privileges()
        sys.argv = [sys.argv[0]]
        entry.run(conn, output, target, request["args"])
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # noqa: BLE001 - printed where the worker's output goes, as an interpreter would
        traceback.print_exc()
    finally:
        try:
            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


if __name__ == "__main__":
    main()
