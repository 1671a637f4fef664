"""Workers' private scratch folders: where each one lies, and removal of those a dead judge left.

A worker's scratch folder holds its candidate file, Triton cache, reply file and ``HOME``; it is
the only folder the sandbox lets it write (``isolation.py``) and is removed when the worker is
cleaned up (``spawn.WorkerProcess.cleanup``). The folders of one user's judges lie together in
``<root>/hawkeye-workers-<uid>/``, named by the judge's pid, so a judge that was killed before it
could clean up has its folders removed by the next judge that starts a worker.
"""

from __future__ import annotations

import os
import shutil
import tempfile

# Folders where worker scratch folders are made: shared memory when it has room for a few GPU-shape
# replies (a gemm_bf16 reply is 224 MiB with references in the parent; BENCHMARKS.md), else the
# temporary folder.
SHM_DIR = "/dev/shm"
SHM_MIN_FREE_BYTES = 4 << 30

_SWEPT: set[str] = set()


def scratch_root() -> str | None:
    """``/dev/shm`` when it exists, is writable and has ``SHM_MIN_FREE_BYTES`` free, else None (the
    system temporary folder)."""
    try:
        if os.access(SHM_DIR, os.W_OK) and shutil.disk_usage(SHM_DIR).free >= SHM_MIN_FREE_BYTES:
            return SHM_DIR
    except OSError:
        pass
    return None


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


__all__ = ["SHM_DIR", "SHM_MIN_FREE_BYTES", "new_scratch", "scratch_root", "sweep_stale"]
