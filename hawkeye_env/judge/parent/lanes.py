"""GPU lanes: which GPU a worker runs on, its warm compile caches, and the per-GPU timing lock.

A lane is one GPU (or the CPU interpreter). Every candidate still runs in a fresh process, a new
interpreter in its own sandbox (``spawn.py``): a candidate's module-level side effects,
monkeypatches and leftover CUDA state must never reach another candidate's verdict
(docs/threat-model.md #6, #7), so processes are never reused. "Warm" therefore means what can be kept
without sharing a live process:

* standby workers (``standby.py``) have imported torch, Triton and the judge's modules, loaded
  Triton's runtime and on CUDA created their context before their one candidate arrives;
* each lane has persistent Triton and inductor cache folders (``TRITON_CACHE_DIR``,
  ``TORCHINDUCTOR_CACHE_DIR``) for its trusted processes: baseline workers (the ``torch.compile``
  baseline is loaded instead of recompiled) and replays (Triton's launchers built from validated
  signatures). A candidate compiles into its private scratch folder (``worker_start``), so nothing
  it writes reaches another verdict. Both caches are keyed by a hash of the source and compile
  options, and both write through a temporary file and a rename, so several processes of one lane
  can share a folder;
* baseline times live in the results store (``store.py``).

Timing lock. Correctness trials of several candidates may share a GPU; a timed section may not
share it with any other candidate's GPU work. Each GPU has a reader/writer lock: a worker holds it
shared from before it first touches CUDA until its trials are done, and exclusive while it times.
The lock is held by the trusted parent on the worker's behalf (``sandbox.py``: the worker sends a
``lane_request`` and waits for ``go``), so candidate code can never hold it, and it is released
once the worker has replied or died. Locks are ``fcntl.flock`` on one file per physical GPU in a
lock folder, so they hold across threads and across processes of one host (several trainer ranks
each judging). A waiting writer first takes a second "gate" file, which readers pass through on
their way in: new correctness phases wait behind a queued timing, so timings are not starved.
Every acquisition opens its own file description, which is what makes two holders in one process
conflict, and releases with ``LOCK_UN`` before closing, so a copy of the descriptor inherited by a
forked child cannot keep the lock alive.

Cost of the guarantee: a candidate that hangs in its correctness trials holds its GPU shared until
its timeout, and no timed section runs on that GPU meanwhile (the pool keeps placing new candidates
on less busy GPUs). Batches with many hanging candidates want a short ``EvalConfig.timeout_s``.
"""

from __future__ import annotations

import fcntl
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import platformdirs

LOCK_DIR_ENV = "HAWKEYE_LANE_LOCK_DIR"
CACHE_DIR_ENV = "HAWKEYE_WORKER_CACHE"
SHARED, EXCLUSIVE, NONE = "shared", "exclusive", "none"
MODES = (SHARED, EXCLUSIVE, NONE)


def default_lock_dir() -> str:
    """``$HAWKEYE_LANE_LOCK_DIR``, else ``<user cache>/hawkeye-env/locks``: one folder per host user,
    so every process of that user on the host agrees on the lock files."""
    return os.environ.get(LOCK_DIR_ENV) or str(Path(platformdirs.user_cache_dir("hawkeye-env")) / "locks")


def default_cache_root() -> str:
    """``$HAWKEYE_WORKER_CACHE``, else ``<user cache>/hawkeye-env/worker-cache``."""
    return os.environ.get(CACHE_DIR_ENV) or str(Path(platformdirs.user_cache_dir("hawkeye-env")) / "worker-cache")


class LaneLock:
    """Reader/writer lock on one GPU, backed by ``flock`` on ``<lock_dir>/gpu-<id>.lock``.

    Non-blocking at its core (``try_acquire``), so the parent can poll it inside its worker loop
    while it keeps watching the worker's clock and memory. One instance is one holder; it holds at
    most one mode at a time, and ``try_acquire`` of a new mode first releases the old one (an
    upgrade from shared to exclusive is release-then-acquire, so two upgrading readers never
    deadlock).
    """

    def __init__(self, gpu_id: str, lock_dir: str | os.PathLike | None = None):
        folder = Path(lock_dir or default_lock_dir())
        folder.mkdir(parents=True, exist_ok=True)
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in str(gpu_id))
        self.path = folder / f"gpu-{safe}.lock"
        self.gate_path = folder / f"gpu-{safe}.gate"
        self.mode: str | None = None
        self._fd: int | None = None
        self._gate_fd: int | None = None

    @staticmethod
    def _open(path: Path) -> int:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)

    @staticmethod
    def _try(fd: int, op: int) -> bool:
        try:
            fcntl.flock(fd, op | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False

    @staticmethod
    def _close(fd: int) -> None:
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def try_acquire(self, mode: str) -> bool:
        """Try once to hold the lock in ``mode`` (``shared`` or ``exclusive``); never blocks."""
        if mode not in (SHARED, EXCLUSIVE):
            raise ValueError(f"mode must be {SHARED} or {EXCLUSIVE}, not {mode!r}")
        if self.mode == mode:
            return True
        if self.mode is not None or (mode == SHARED and self._gate_fd is not None):
            self.release()
        if mode == EXCLUSIVE:
            if self._gate_fd is None:
                fd = self._open(self.gate_path)
                if not self._try(fd, fcntl.LOCK_EX):
                    os.close(fd)
                    return False
                self._gate_fd = fd
            return self._take(fcntl.LOCK_EX, mode)
        fd = self._open(self.gate_path)
        try:
            if not self._try(fd, fcntl.LOCK_EX):
                return False
            return self._take(fcntl.LOCK_SH, mode)
        finally:
            self._close(fd)

    def _take(self, op: int, mode: str) -> bool:
        fd = self._fd if self._fd is not None else self._open(self.path)
        if not self._try(fd, op):
            self._fd = fd
            return False
        self._fd, self.mode = fd, mode
        if self._gate_fd is not None:
            self._close(self._gate_fd)
            self._gate_fd = None
        return True

    def release(self) -> None:
        """Drop whatever is held, including a writer's place in the queue; idempotent."""
        for name in ("_fd", "_gate_fd"):
            fd = getattr(self, name)
            if fd is not None:
                setattr(self, name, None)
                self._close(fd)
        self.mode = None

    def acquire(self, mode: str, timeout_s: float | None = None, poll_s: float = 0.002) -> bool:
        """Block until held in ``mode`` or ``timeout_s`` passed (then False, nothing held)."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while not self.try_acquire(mode):
            if deadline is not None and time.monotonic() > deadline:
                self.release()
                return False
            time.sleep(poll_s)
        return True

    @contextmanager
    def hold(self, mode: str):
        """``with lock.hold("exclusive"): ...``: acquire (blocking), release on exit."""
        self.acquire(mode)
        try:
            yield self
        finally:
            self.release()


@dataclass
class LaneClaim:
    """The parent's side of one worker's lane protocol: what the worker asked for, whether it was
    granted, and how long the worker has waited (time that does not count against its timeout)."""

    lock: LaneLock | None
    pending: str | None = None
    waited_s: float = 0.0
    _since: float = field(default=0.0, repr=False)

    def request(self, mode) -> None:
        """The worker asked for ``mode`` (a worker's value: checked before it is used, never printed);
        whatever it held is released at once."""
        if not isinstance(mode, str) or mode not in MODES:
            raise ValueError(f"unknown lane mode ({type(mode).__name__})")
        if self.lock is not None:
            self.lock.release()
        self.pending, self._since = mode, time.monotonic()

    def waiting_s(self) -> float:
        """Seconds the current request has waited so far (0 when none is pending)."""
        return time.monotonic() - self._since if self.pending else 0.0

    def grant(self) -> bool:
        """Try to grant the pending request; True exactly when it was granted now."""
        if self.pending is None:
            return False
        if self.pending != NONE and self.lock is not None and not self.lock.try_acquire(self.pending):
            return False
        self.waited_s += self.waiting_s()
        self.pending = None
        return True

    def total_wait_s(self) -> float:
        return self.waited_s + self.waiting_s()

    def close(self) -> None:
        if self.lock is not None:
            self.lock.release()
        self.pending = None


@dataclass(frozen=True)
class Lane:
    """Where a worker runs: a GPU index among the visible devices (None on CPU), the id its lock
    file is named after, and the folder holding its compile caches (None: the process defaults)."""

    gpu: int | None = None
    lock_id: str | None = None
    cache_dir: str | None = None
    lock_dir: str | None = None

    def cache_env(self) -> dict[str, str]:
        """Environment the lane's workers get before anything compiles."""
        if self.cache_dir is None:
            return {}
        return {"TRITON_CACHE_DIR": str(Path(self.cache_dir) / "triton"),
                "TORCHINDUCTOR_CACHE_DIR": str(Path(self.cache_dir) / "inductor")}

    def job_fields(self) -> dict:
        """What the worker needs to know (JSON): its GPU and its cache environment."""
        return {"gpu": self.gpu, "env": self.cache_env()}

    def new_lock(self) -> LaneLock | None:
        return None if self.lock_id is None else LaneLock(self.lock_id, self.lock_dir)


def physical_gpu_id(index: int) -> str:
    """A name for visible GPU ``index`` that is the same in every process of the host, whatever
    its ``CUDA_VISIBLE_DEVICES`` (Ray gives each actor its own): the device UUID, else the entry of
    ``CUDA_VISIBLE_DEVICES``, else the index."""
    import torch

    try:
        uuid = str(torch.cuda.get_device_properties(index).uuid)
        if uuid:
            return f"uuid-{uuid}"
    except Exception:  # noqa: BLE001 - older torch or no driver: fall back to the visible list
        pass
    visible = [s.strip() for s in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if s.strip()]
    return visible[index] if index < len(visible) else str(index)


def make_lanes(device: str, gpus: int | list[int] | None = None, cache_root: str | None = None,
               lock_dir: str | None = None) -> list[Lane]:
    """Lanes for ``device``: one per GPU on CUDA (``gpus``: how many of the visible GPUs, or which
    indices; default all), with cache folders under ``cache_root`` (default
    ``default_cache_root()``), one per GPU; on CPU one lane without lock or cache folders."""
    if device != "cuda":
        return [Lane()]  # the interpreter compiles nothing and times nothing: no caches, no lock
    import torch

    root = Path(cache_root or default_cache_root())

    count = torch.cuda.device_count()
    if gpus is None:
        indices = list(range(count))
    elif isinstance(gpus, int):
        if not 1 <= gpus <= count:
            raise ValueError(f"--gpus {gpus}: this machine shows {count} GPU(s)")
        indices = list(range(gpus))
    else:
        indices = list(gpus)
        bad = [i for i in indices if not 0 <= i < count]
        if bad:
            raise ValueError(f"GPU indices {bad} out of range: {count} visible")
    lanes = []
    for i in indices:
        lock_id = physical_gpu_id(i)
        lanes.append(Lane(gpu=i, lock_id=lock_id, cache_dir=str(root / f"gpu-{lock_id}"), lock_dir=lock_dir))
    return lanes


def default_lane(device: str) -> Lane | None:
    """The lane of a single ``Evaluator.evaluate`` call: the current GPU, with its lock and default
    cache folders, so single calls and pools on one host never time at once; None on CPU."""
    if device != "cuda":
        return None
    import torch

    return make_lanes("cuda", [torch.cuda.current_device()])[0]


__all__ = ["EXCLUSIVE", "NONE", "SHARED", "Lane", "LaneClaim", "LaneLock", "default_lane", "make_lanes",
           "physical_gpu_id"]
