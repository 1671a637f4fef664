"""Sandboxed workers forked from a pre-imported zygote instead of started as fresh interpreters.

A fresh sandboxed worker spends about 1.3 CPU s importing torch, Triton and the judge's worker
modules before its job (``profile.worker.cpu_setup_s`` of a CPU verdict; its job took 0.18 s);
standbys hide that latency but not the CPU, which on a two-core machine is most of a test suite's
time. With the fork server (on by default, ``$HAWKEYE_FORKSERVER=0`` turns it off) each worker is
built in two parts:

* its sandbox: a ``bwrap`` *holder*, the same command line as every worker's
  (``isolation.bwrap_command``: namespaces, read-only root, its scratch folder, hidden paths, GPU
  nodes) running ``sleep``, started from the judge's launcher thread (``spawn.py``) so it dies
  with the judge. It is ready once its command has printed one byte, after ``bwrap`` has
  finished its mounts; ``--info-fd`` gives its init's pid, whose ``/proc/PID/ns/*`` are opened.
* its process: a fork of the zygote for its target and environment (``zygote.py``; one per
  ``(target, device, environment)``, started on first use, trusted, unsandboxed, pre-imported),
  sent those namespace descriptors with the worker's connection and output file; the fork joins
  the holder's namespaces and drops every privilege before any job arrives.

``ForkedWorker`` gives the judge the ``spawn.WorkerProcess`` calls: its ``pid`` is the worker's
host pid (the memory watch reads its process tree), ``kill`` kills the holder (the PID
namespace's init, so the worker and everything it started die with it), ``exitcode`` is what the
zygote's keeper reported. Where the fork server cannot run (a zygote that fails to start, a keeper
that cannot join the namespaces: a set-uid ``bwrap`` whose namespaces the judge's user does not
own), ``launch`` returns None and the caller starts a fresh worker; the reason is logged once.
``SERVER.counts`` says how many workers started each way.

A zygote is *retired* after ``MAX_FORKS`` forks, or when ``MAX_ZYGOTES`` others are newer: it takes
no more requests and exits once its last keeper has, so no running worker dies with it; a fresh
zygote serves the next request. Its forks share its address-space layout and string-hash secret
(a fresh interpreter draws its own), so what a candidate learns of one layout spans at most
``MAX_FORKS`` verdicts, and none of it is the trusted parent's or another target's zygote's.
"""

from __future__ import annotations

import json
import logging
import os
import select
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections import OrderedDict

from hawkeye_env.judge.parent.launch.isolation import bwrap_command

ENV_FLAG = "HAWKEYE_FORKSERVER"
# A zygote imports torch, Triton and one worker module: 1.3-1.9 CPU s on the CPU machine; 60 s
# means something is wrong and workers start fresh instead.
ZYGOTE_READY_S = 60.0
# A holder is ``bwrap`` and ``sleep``: about 15 ms on the CPU machine; a keeper forks at once.
HOLDER_READY_S = 30.0
# Zygotes kept at once (a candidate, a replay and a baseline target per device, and the odd
# environment a test sets); the least recently used is retired past it.
MAX_ZYGOTES = 6
# Forks of one zygote before a fresh one replaces it: its forks share its address-space layout
# and string-hash secret, so a candidate probing them across verdicts learns at most this many
# samples of one layout; a replacement costs one zygote start (1.3-1.9 CPU s) per this many workers.
MAX_FORKS = 256
NS_NAMES = ("user", "mnt", "cgroup", "uts", "ipc", "net", "pid")  # ns_enter.NAMES, in its order
HOLDER_COMMAND = ["/bin/sh", "-c", "echo r; exec sleep 2147483647 >/dev/null"]

log = logging.getLogger(__name__)


class ForkFailed(RuntimeError):
    """The fork server could not give this worker a process; a fresh one is started instead."""


def enabled() -> bool:
    """On unless ``$HAWKEYE_FORKSERVER`` turns it off."""
    return os.environ.get(ENV_FLAG, "").strip().lower() not in ("0", "false", "no", "off")


def _read_within(fd: int, seconds: float, what: str) -> bytes:
    ready, _, _ = select.select([fd], [], [], seconds)
    if not ready:
        raise ForkFailed(f"{what} not ready within {seconds:.0f} s")
    data = os.read(fd, 65536)
    if not data:
        raise ForkFailed(f"{what} ended before it was ready")
    return data


class Zygote:
    """One zygote process (``zygote.py``) and the socket its fork requests go through."""

    def __init__(self, target: str, env: dict[str, str], start):
        self._sock, theirs = socket.socketpair()
        self._lock = threading.Lock()
        argv = [sys.executable, "-m", "hawkeye_env.judge.zygote.zygote", "--control", str(theirs.fileno()),
                "--target", target]
        try:
            self._popen = start(argv, env, (theirs.fileno(),))
        finally:
            theirs.close()
        self.forks = 0
        try:
            if _read_within(self._sock.fileno(), ZYGOTE_READY_S, "zygote") != b"ready":
                raise ForkFailed("the zygote sent something other than ready")
        except ForkFailed:
            self.close()
            raise

    def alive(self) -> bool:
        return self._popen.poll() is None

    def fork(self, request: dict, fds: list[int]) -> None:
        """Send one request with its descriptors (``zygote.serve`` reads it); ``ForkFailed`` if the
        zygote was retired since it was handed out (another thread replaced it)."""
        with self._lock:
            if self._sock.fileno() < 0:
                raise ForkFailed("the zygote was retired")
            self.forks += 1
            socket.send_fds(self._sock, [json.dumps(request).encode("utf-8")], fds)

    def retire(self) -> None:
        """Take no more requests: the zygote exits once its last keeper has (its workers finish)."""
        with self._lock:
            self._sock.close()

    def reaped(self) -> bool:
        """Whether a retired zygote has exited (and is reaped)."""
        return self._popen.poll() is not None

    def close(self) -> None:
        """Kill the zygote now: its keepers die with it (``PR_SET_PDEATHSIG``), so do their workers."""
        self._sock.close()
        try:
            self._popen.kill()
            self._popen.wait(5)
        except (OSError, subprocess.TimeoutExpired):
            pass


class ForkedWorker:
    """A worker forked into its holder's sandbox: ``spawn.WorkerProcess``'s calls."""

    sandboxed = True

    def __init__(self, holder: subprocess.Popen, status_fd: int, scratch: str):
        self._holder, self._status, self.scratch = holder, status_fd, scratch
        self._buffer, self._code, self._ended = b"", None, False
        self._lock = threading.Lock()  # a standby's warm-up thread polls while the pool may discard it
        self.pid = 0
        deadline = time.monotonic() + HOLDER_READY_S
        while not self.pid and not self._ended and time.monotonic() < deadline:
            self._read(deadline - time.monotonic())
        if not self.pid:
            self.cleanup(remove_scratch=False)  # the fresh worker started instead uses it
            raise ForkFailed(self._error or "the keeper sent no pid")

    _error = ""

    def _read(self, wait_s: float) -> None:
        with self._lock:
            if self._ended or self._status < 0:
                return
            ready, _, _ = select.select([self._status], [], [], max(wait_s, 0.0))
            if ready:
                self._take(os.read(self._status, 4096))

    def _take(self, data: bytes) -> None:
        """Parse the keeper's status lines (``zygote._keeper``)."""
        if not data:  # the keeper is gone without a word: its worker died with it (PDEATHSIG)
            self._ended, self._code = True, self._code if self._code is not None else -9
            return
        self._buffer += data
        *lines, self._buffer = self._buffer.split(b"\n")
        for line in lines:
            kind, _, value = line.decode(errors="replace").partition(" ")
            if kind == "pid" and value.isdigit():
                self.pid = int(value)
            elif kind == "exit":
                self._ended, self._code = True, int(value) if value.lstrip("-").isdigit() else 1
            elif kind == "error":
                self._ended, self._error = True, value

    @property
    def exitcode(self) -> int | None:
        self._read(0.0)
        return self._code if self._ended else None

    def is_alive(self) -> bool:
        self._read(0.0)
        return not self._ended

    def join(self, timeout: float | None = None) -> None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._ended and self._status >= 0:
            left = 1.0 if deadline is None else deadline - time.monotonic()
            if left <= 0:
                return
            self._read(min(left, 0.05))  # short slices: other threads' polls wait on the lock

    def kill(self) -> None:
        """SIGKILL the holder: the PID namespace's init, so the worker and all it started die."""
        if self._holder.poll() is None:
            try:
                self._holder.kill()
            except (ProcessLookupError, PermissionError):
                pass

    def cleanup(self, remove_scratch: bool = True) -> None:
        """Kill, reap, close the status pipe, remove the scratch folder."""
        self.kill()
        self.join(5.0)
        try:
            self._holder.wait(5.0)
        except subprocess.TimeoutExpired:
            pass
        with self._lock:
            if self._status >= 0:
                os.close(self._status)
                self._status = -1
        if remove_scratch:
            shutil.rmtree(self.scratch, ignore_errors=True)


class ForkServer:
    """The zygotes of this judge process, keyed by ``(target, device, environment)``."""

    def __init__(self) -> None:
        self._zygotes: OrderedDict = OrderedDict()
        self._retired: list[Zygote] = []  # until they exit
        self._failed: dict = {}
        self._lock = threading.Lock()
        self.counts = {"forked": 0, "fresh": 0}  # workers started each way (``spawn.launch``)
        self._count_lock = threading.Lock()  # not ``_lock``, which a zygote's start holds for seconds

    def count(self, kind: str) -> None:
        with self._count_lock:
            self.counts[kind] += 1

    def _retire(self, zygote: Zygote) -> None:
        zygote.retire()
        self._retired = [z for z in self._retired if not z.reaped()] + [zygote]

    def zygote(self, target: str, device: str, env: dict[str, str], start) -> Zygote | None:
        """The running zygote for this key (started on first use, replaced after ``MAX_FORKS``
        forks), or None where one failed."""
        key = (target, device, json.dumps(env, sort_keys=True))
        with self._lock:
            if key in self._failed:
                return None
            found = self._zygotes.get(key)
            if found is not None and found.alive() and found.forks < MAX_FORKS:
                self._zygotes.move_to_end(key)
                return found
            if found is not None:
                self._retire(self._zygotes.pop(key))
            try:
                found = Zygote(target, env, start)
            except (ForkFailed, OSError) as exc:
                self._failed[key] = str(exc)
                log.warning("fork server off for %s on %s: %s; workers start fresh", target, device, exc)
                return None
            self._zygotes[key] = found
            while len(self._zygotes) > MAX_ZYGOTES:
                self._retire(self._zygotes.popitem(last=False)[1])
            return found

    def mark_failed(self, target: str, device: str, env: dict[str, str], why: str) -> None:
        key = (target, device, json.dumps(env, sort_keys=True))
        with self._lock:
            self._failed[key] = why
            found = self._zygotes.pop(key, None)
        if found is not None:
            found.close()
        log.warning("fork server off for %s on %s: %s; workers start fresh", target, device, why)


SERVER = ForkServer()


def start_holder(scratch: str, device: str, writable: tuple[str, ...], env: dict[str, str],
                 hidden: tuple[str, ...], start) -> tuple[subprocess.Popen, list[int]]:
    """Start a holder sandbox for ``scratch`` and open its namespaces; returns ``(popen, fds)``
    (``NS_NAMES`` order). ``start(argv, env, fds, stdout)`` is the launcher's."""
    info_r, info_w = os.pipe()
    ready_r, ready_w = os.pipe()
    command = bwrap_command(HOLDER_COMMAND, scratch, device, writable, env, hidden)
    command[1:1] = ["--info-fd", str(info_w)]
    try:
        popen = start(command, None, (info_w,), ready_w)
    finally:
        os.close(info_w)
        os.close(ready_w)
    fds: list[int] = []
    try:
        _read_within(ready_r, HOLDER_READY_S, "sandbox holder")
        info = json.loads(_read_within(info_r, HOLDER_READY_S, "sandbox holder's info"))
        init = int(info["child-pid"])
        for name in NS_NAMES:
            fds.append(os.open(f"/proc/{init}/ns/{name}", os.O_RDONLY | os.O_CLOEXEC))
    except (ForkFailed, OSError, ValueError, KeyError) as exc:
        for fd in fds:
            os.close(fd)
        popen.kill()
        popen.wait()
        raise ForkFailed(f"sandbox holder: {exc}") from exc
    finally:
        os.close(ready_r)
        os.close(info_r)
    return popen, fds


__all__ = ["ENV_FLAG", "SERVER", "ForkFailed", "ForkServer", "ForkedWorker", "Zygote", "enabled", "start_holder"]
