"""The server side of ``bench.served_load``: the scripted served env in a subprocess.

``ScriptedServer(workdir, plan)`` starts ``python -m bench.scripted_judge`` on a free
loopback port with a fresh results store in ``workdir``, its output in ``workdir/server.log``,
waits for ``/health``, and on exit stops it (SIGINT, then SIGKILL after 20 s). ``memory()`` reads
its resident and peak memory from ``/proc``; ``log_summary()`` counts its log's ERROR lines and
tracebacks; ``stored_verdicts(path)`` reads back what the store holds.
"""

from __future__ import annotations

import json
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx

STARTUP_S = 120.0  # the subprocess imports torch and openenv: seconds on a loaded 2-core machine


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ScriptedServer:
    """A scripted served env in a subprocess; see the module docstring."""

    def __init__(self, workdir: Path, plan):
        self.workdir, self.plan = Path(workdir), plan
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.store = self.workdir / "verdicts.sqlite3"
        self.log = self.workdir / "server.log"
        self.proc: subprocess.Popen | None = None
        self.rss_start_mib: float | None = None

    def __enter__(self) -> ScriptedServer:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.store.unlink(missing_ok=True)
        argv = [sys.executable, "-m", "bench.scripted_judge", "--port", str(self.port), "--store", str(self.store),
                "--max-sessions", str(self.plan.max_sessions), "--session-timeout", str(self.plan.session_timeout_s),
                "--max-turns", str(self.plan.steps)]
        if self.plan.workers:
            argv += ["--workers", str(self.plan.workers)]
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + STARTUP_S
        while True:
            try:
                if httpx.get(self.url + "/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.__exit__()
                raise RuntimeError(f"the server did not start; see {self.log}")
            time.sleep(0.2)
        self.rss_start_mib = self.memory()["rss_mib"]
        return self

    def __exit__(self, *exc) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def memory(self) -> dict:
        """``rss_mib`` now, ``peak_mib`` (the high-water mark) and ``rss_start_mib`` once it served."""
        fields = {}
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0]) / 1024
        return {"rss_start_mib": self.rss_start_mib, "rss_mib": fields["VmRSS"], "peak_mib": fields["VmHWM"]}

    def log_summary(self) -> dict:
        """Lines of the server's log, its ERROR lines and tracebacks (the log is read after the stop)."""
        self.__exit__()
        text = self.log.read_text(errors="replace")
        lines = text.splitlines()
        return {"log_lines": len(lines), "log_errors": sum(line.startswith("ERROR") for line in lines),
                "log_tracebacks": text.count("Traceback (most recent call last)"),
                "log_first_error": next((line for line in lines if line.startswith("ERROR")), None)}


def stored_verdicts(path: Path) -> list[dict]:
    """Every verdict row of the results store at ``path``: its source hash and stage."""
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT source_hash, verdict FROM verdicts").fetchall()
    return [{"source_hash": h, "stage": json.loads(v)["stage"]} for h, v in rows]


__all__ = ["STARTUP_S", "ScriptedServer", "free_port", "stored_verdicts"]
