"""User task folders: what a ``HAWKEYE_TASK_DIRS`` entry may hold and how its tasks are found.

A folder holds task modules in either layout, or both:

* top-level ``.py`` files, one task each (``hawkeye tasks import-kernelbench``): module ``<stem>``;
* one folder per task holding ``task.py`` (``hawkeye tasks generate``): module ``<folder>.task``.

A folder with an index, ``tasks.json`` (``write_index``: task id -> module and the fields
``hawkeye tasks list`` shows, its split among them), is read lazily: registering it imports
nothing, listing reads the index, and ``registry.get_task`` imports the one module asked for. A
folder without an index has all its modules imported when it is registered.

An entry may also be an archive of such a folder (``.tar.gz``, ``.tgz``, ``.tar``, ``.zip``): it is
unpacked once beside it, into ``.<archive name>.unpacked-<key>`` (the key hashes the archive's path,
size and modification time, so a changed archive is unpacked anew), and the folder is used from
there. The place depends on the archive alone, so the judge's sandboxed workers, which see the
filesystem read-only and have a temporary folder of their own, find the copy the parent unpacked.
Where the archive's folder is not writable the copy goes to the temporary folder
(``<tmp>/hawkeye-task-archives/<key>``), which workers cannot find: copy such an archive somewhere
writable first. An archive holding a single top-level folder is read from that folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tarfile
import tempfile
import zipfile
from functools import cache
from pathlib import Path

INDEX_FILE = "tasks.json"
INDEX_VERSION = 1
TASK_FILE = "task.py"
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".zip")
ARCHIVE_CACHE = "hawkeye-task-archives"


def is_archive(path: str | os.PathLike) -> bool:
    return str(path).endswith(ARCHIVE_SUFFIXES) and Path(path).is_file()


def resolve_entry(entry: str) -> str:
    """The folder an entry names: the entry itself (resolved), or its archive's unpacked copy."""
    path = Path(entry).resolve()
    return unpack(path) if is_archive(path) else str(path)


def unpack(archive: Path) -> str:
    """The folder ``archive`` unpacks to (module docstring), unpacking it first if needed."""
    stat = archive.stat()
    key = hashlib.sha256(f"{archive}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()[:16]
    target = archive.parent / f".{archive.name}.unpacked-{key}"
    if not target.is_dir() and not os.access(archive.parent, os.W_OK):
        target = Path(tempfile.gettempdir()) / ARCHIVE_CACHE / key
    if not target.is_dir():
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{key}-"))
        if str(archive).endswith(".zip"):
            with zipfile.ZipFile(archive) as z:
                z.extractall(staging)  # zipfile drops absolute paths and '..' components
        else:
            with tarfile.open(archive) as t:
                _extract_tar(t, staging)
        try:
            os.replace(staging, target)
        except OSError:  # another process unpacked it first
            shutil.rmtree(staging, ignore_errors=True)
    children = [p for p in target.iterdir() if not p.name.startswith(".")]
    if len(children) == 1 and children[0].is_dir() and not (target / INDEX_FILE).exists():
        return str(children[0])
    return str(target)


def _extract_tar(archive: tarfile.TarFile, target: Path) -> None:
    """Extract regular files and folders only, none outside ``target`` (tarfile's ``data`` filter
    where this Python has it)."""
    if hasattr(tarfile, "data_filter"):
        archive.extractall(target, filter="data")
        return
    members = [m for m in archive.getmembers() if m.isfile() or m.isdir()]
    for m in members:
        if Path(m.name).is_absolute() or ".." in Path(m.name).parts:
            raise ValueError(f"archive member {m.name!r} points outside the archive")
    archive.extractall(target, members=members)


def eager_modules(folder: str) -> list[str]:
    """Module names of a folder without an index: top-level ``.py`` files and task packages."""
    root = Path(folder)
    if (root / INDEX_FILE).is_file():
        return []
    flat = [p.stem for p in sorted(root.glob("*.py")) if not p.name.startswith("_")]
    packages = [f"{p.parent.name}.task" for p in sorted(root.glob(f"*/{TASK_FILE}")) if p.parent.name.isidentifier()]
    return flat + packages


def index_stamp(folder: str) -> tuple[int, int] | None:
    """``(mtime_ns, size)`` of the folder's index (a rewritten index has another), None without one."""
    try:
        stat = (Path(folder) / INDEX_FILE).stat()
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


def read_index(folder: str) -> dict[str, dict]:
    """The folder's index, task id -> entry (``module`` and listing fields); {} without one."""
    stamp = index_stamp(folder)
    return {} if stamp is None else _read_index(str(Path(folder) / INDEX_FILE), *stamp)


@cache
def _read_index(path: str, mtime_ns: int, size: int) -> dict[str, dict]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if data.get("version") != INDEX_VERSION:
        raise RuntimeError(f"{path}: index version {data.get('version')!r}, expected {INDEX_VERSION}")
    return {entry["id"]: entry for entry in data["tasks"]}


def write_index(folder: str | os.PathLike, entries: list[dict], meta: dict | None = None) -> Path:
    """Write ``folder``'s index: ``entries`` (each with ``id`` and ``module``) and ``meta`` (how it was made)."""
    bad = [e.get("id") for e in entries if not {"id", "module"} <= set(e)]
    if bad:
        raise ValueError(f"index entries without id or module: {bad[:5]}")
    path = Path(folder) / INDEX_FILE
    path.write_text(json.dumps({"version": INDEX_VERSION, "meta": meta or {}, "tasks": entries}, indent=1) + "\n",
                    encoding="utf-8")
    return path
