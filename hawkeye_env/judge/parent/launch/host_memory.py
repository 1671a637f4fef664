"""Host memory a worker holds, read from ``/proc`` and its scratch folder by the trusted parent.

The parent polls it while the worker runs (``sandbox.run_job``) and kills a worker past the
judge's memory limit: the resident memory of its whole process tree (a sandbox's ``bwrap``, the
namespace's init and the worker below them, and anything they started), plus the bytes in its
scratch folder, which are memory too when the folder lies on ``/dev/shm`` (``scratch.py``).
"""

from __future__ import annotations

import os

# A scratch folder walks at most this many entries per poll (about 10 ms on the CPU machine); an
# honest worker's holds its candidate, its Triton cache (a few files per compiled kernel) and its
# reply. A folder with more, or one the judge cannot read, is counted as UNCOUNTED bytes: past any
# limit, so files hidden below the walk's reach cannot hold memory unseen.
MAX_SCRATCH_ENTRIES = 10_000
UNCOUNTED = 1 << 62


def worker_bytes(proc) -> int:
    """Host memory worker ``proc`` holds (a ``spawn.WorkerProcess``, or anything with ``pid`` and
    ``scratch``): ``tree_rss_bytes`` of its pid plus ``folder_bytes`` of its scratch folder."""
    return tree_rss_bytes(proc.pid) + folder_bytes(getattr(proc, "scratch", None))


def folder_bytes(folder: str | None, most_entries: int = MAX_SCRATCH_ENTRIES) -> int:
    """Bytes in the files below ``folder`` (links not followed): what a worker's scratch folder
    holds in memory when it lies on ``/dev/shm``; ``UNCOUNTED`` when it holds more than
    ``most_entries`` entries or a folder the judge cannot read."""
    if not folder:
        return 0
    total, seen, stack = 0, 0, [folder]
    while stack:
        try:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    seen += 1
                    if seen > most_entries:
                        return UNCOUNTED
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    elif entry.is_file(follow_symlinks=False):
                        total += entry.stat(follow_symlinks=False).st_blocks * 512
        except FileNotFoundError:  # removed while walked: it holds nothing
            continue
        except OSError:
            return UNCOUNTED
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


__all__ = ["MAX_SCRATCH_ENTRIES", "UNCOUNTED", "folder_bytes", "tree_rss_bytes", "worker_bytes"]
