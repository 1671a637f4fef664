"""A small SQLite store for verdicts and baseline timings, shared by every process on a machine.

Judging a candidate (and timing the baselines it is compared against) is expensive, and the same
(task, source) pair comes back often during training and evals. This store caches both:

* ``verdicts``: one verdict (as JSON) per task, source hash, device, software versions and judge
  config. Any change to the source, the device, a version or a config value is a different key,
  so a stale verdict is never served.
* ``baselines``: one median time (plus detail JSON) per task, input shape, device, versions and
  baseline name (``eager``, ``compile``, ``cublas``...).
* ``unavailable_baselines``: under the same key, why a vendor baseline cannot run there (library
  missing, shape unsupported). Recording a time removes the reason and vice versa, so a key holds
  one or the other.

dict-valued key parts are serialised as canonical JSON (sorted keys, compact separators), so key
order never splits the cache. The file lives at :func:`default_store_path` unless a path is
given; ``HAWKEYE_STORE`` overrides it, and ``:memory:`` gives a private in-memory store. The
database runs in WAL mode with a 30 s busy timeout, so several processes (env workers, the CLI,
evals) can read and write it at once; each write is its own short transaction.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import platformdirs

if TYPE_CHECKING:
    from typing_extensions import Self

ENV_VAR = "HAWKEYE_STORE"
MEMORY = ":memory:"
BUSY_TIMEOUT_S = 30.0
# ``stall.CAUSED_KEY``: a verdict whose profile has it is never stored (the store imports no judge module).
JUDGE_CAUSED_KEY = "judge_stall_timeout_s"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS verdicts (
    task TEXT NOT NULL, source_hash TEXT NOT NULL, device TEXT NOT NULL,
    versions TEXT NOT NULL, config TEXT NOT NULL,
    verdict TEXT NOT NULL, created REAL NOT NULL,
    PRIMARY KEY (task, source_hash, device, versions, config)
);
CREATE TABLE IF NOT EXISTS baselines (
    task TEXT NOT NULL, shape TEXT NOT NULL, device TEXT NOT NULL,
    versions TEXT NOT NULL, name TEXT NOT NULL,
    median_ms REAL NOT NULL, detail TEXT NOT NULL, created REAL NOT NULL,
    PRIMARY KEY (task, shape, device, versions, name)
);
CREATE TABLE IF NOT EXISTS unavailable_baselines (
    task TEXT NOT NULL, shape TEXT NOT NULL, device TEXT NOT NULL,
    versions TEXT NOT NULL, name TEXT NOT NULL,
    reason TEXT NOT NULL, created REAL NOT NULL,
    PRIMARY KEY (task, shape, device, versions, name)
);
"""
_BASELINE_KEY = "task=? AND shape=? AND device=? AND versions=? AND name=?"


def default_store_path() -> str:
    """``$HAWKEYE_STORE`` if set (``:memory:`` allowed), else ``<user cache>/results.sqlite3``."""
    env = os.environ.get(ENV_VAR)
    if env:
        return env
    return str(Path(platformdirs.user_cache_dir("hawkeye-env")) / "results.sqlite3")


def source_hash(source: str) -> str:
    """sha256 hex digest of ``source`` with CRLF line endings normalised to LF (lone surrogates,
    which UTF-8 cannot encode, are hashed by their code points)."""
    return hashlib.sha256(source.replace("\r\n", "\n").encode("utf-8", "surrogatepass")).hexdigest()


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys and no spaces: equal dicts always give equal text."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


class ResultStore:
    """Verdict and baseline cache in one SQLite file; see the module docstring.

    Usable as a context manager; :meth:`close` is idempotent. One connection is shared by the
    threads of a process (guarded by a lock); other processes open their own.
    """

    def __init__(self, path: str | os.PathLike | None = None) -> None:
        target = default_store_path() if path is None else os.fspath(path)
        if target != MEMORY:
            Path(target).expanduser().parent.mkdir(parents=True, exist_ok=True)
            target = str(Path(target).expanduser())
        self.path = target
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = sqlite3.connect(
            target, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
        )
        self._conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        if target != MEMORY:
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute("PRAGMA synchronous = NORMAL")
        with self._lock:
            self._conn.executescript(_SCHEMA)

    # -- plumbing -----------------------------------------------------------------------------

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError("ResultStore is closed")
        return self._conn

    def _write(self, sql: str, params: tuple, *more: tuple[str, tuple]) -> None:
        """Run ``sql`` (and any further ``(sql, params)`` pairs) in one transaction."""
        with self._lock:
            db = self._db()
            db.execute("BEGIN IMMEDIATE")
            try:
                for statement, values in ((sql, params), *more):
                    db.execute(statement, values)
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def _read(self, sql: str, params: tuple = ()) -> list[tuple]:
        with self._lock:
            return self._db().execute(sql, params).fetchall()

    # -- verdicts -----------------------------------------------------------------------------

    def get_verdict(
        self, task: str, source_hash: str, device: str, versions: dict, config: dict
    ) -> dict | None:
        rows = self._read(
            "SELECT verdict FROM verdicts WHERE task=? AND source_hash=? AND device=?"
            " AND versions=? AND config=?",
            (task, source_hash, device, canonical_json(versions), canonical_json(config)),
        )
        return json.loads(rows[0][0]) if rows else None

    def put_verdict(
        self, task: str, source_hash: str, device: str, versions: dict, config: dict, verdict: dict
    ) -> None:
        """Store ``verdict`` under its key, unless its timeout was the judge's (``stall.CAUSED_KEY``
        in its profile): such a verdict is judged again, whichever backend hands it here."""
        if JUDGE_CAUSED_KEY in (verdict.get("profile") or {}):
            return
        key = (task, source_hash, device, canonical_json(versions), canonical_json(config))
        self._write(
            "INSERT OR REPLACE INTO verdicts"
            " (task, source_hash, device, versions, config, verdict, created)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (*key, canonical_json(verdict), time.time()),
        )

    # -- baselines ----------------------------------------------------------------------------

    def get_baselines(
        self, task: str, shape: dict, device: str, versions: dict
    ) -> dict[str, dict[str, Any]]:
        rows = self._read(
            "SELECT name, median_ms, detail FROM baselines"
            " WHERE task=? AND shape=? AND device=? AND versions=? ORDER BY name",
            (task, canonical_json(shape), device, canonical_json(versions)),
        )
        return {name: {"median_ms": ms, **json.loads(detail)} for name, ms, detail in rows}

    def put_baseline(
        self,
        task: str,
        shape: dict,
        device: str,
        versions: dict,
        name: str,
        median_ms: float,
        detail: dict | None = None,
    ) -> None:
        key = (task, canonical_json(shape), device, canonical_json(versions), name)
        self._write(
            "INSERT OR REPLACE INTO baselines"
            " (task, shape, device, versions, name, median_ms, detail, created)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (*key, float(median_ms), canonical_json(detail or {}), time.time()),
            (f"DELETE FROM unavailable_baselines WHERE {_BASELINE_KEY}", key),
        )

    def get_unavailable_baselines(self, task: str, shape: dict, device: str, versions: dict) -> dict[str, str]:
        """Baseline name -> reason it cannot run, for this task, shape, device and versions."""
        rows = self._read(
            "SELECT name, reason FROM unavailable_baselines"
            " WHERE task=? AND shape=? AND device=? AND versions=? ORDER BY name",
            (task, canonical_json(shape), device, canonical_json(versions)),
        )
        return dict(rows)

    def put_unavailable_baseline(
        self, task: str, shape: dict, device: str, versions: dict, name: str, reason: str
    ) -> None:
        """Record that baseline ``name`` cannot run here (replaces any stored time for it)."""
        key = (task, canonical_json(shape), device, canonical_json(versions), name)
        self._write(
            "INSERT OR REPLACE INTO unavailable_baselines"
            " (task, shape, device, versions, name, reason, created) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (*key, str(reason), time.time()),
            (f"DELETE FROM baselines WHERE {_BASELINE_KEY}", key),
        )

    # -- misc ---------------------------------------------------------------------------------

    def count(self) -> int:
        """Number of stored verdicts."""
        return int(self._read("SELECT COUNT(*) FROM verdicts")[0][0])

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ResultStore({self.path!r})"
