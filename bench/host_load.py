"""Where a benchmark's host CPU goes: busy cores over time and CPU seconds per kind of process.

    with HostLoad(interval_s=0.5) as load:
        ...  # judge a batch
    load.report()  # {"busy_cores_mean": ..., "busy_cores_p90": ..., "cpu_s": {"worker": ..., ...}}

A background thread reads ``/proc/stat`` (every core's busy ticks) and every process's
``/proc/<pid>/stat`` (user + system ticks) each ``interval_s``. A process is sorted by its command
line: the judge's own process (``parent``), a judge process by its ``--target`` (``worker``,
``replay``, ``baseline``), ``bwrap``, ``ptxas``, else the program's name. Per process the last
ticks seen count (the last pass, of cores and processes, is at the end), so a process that lives
shorter than an interval (a sandboxed worker forked from the judge's pre-imported zygote often
does) and the last interval of every other that ends early are missing from ``cpu_s``;
``busy_cores_*`` has everything. Linux only: elsewhere the
report says ``unavailable``. A diagnostic of the benchmark's host, never part of a verdict.
"""

from __future__ import annotations

import os
import statistics
import threading
from collections import defaultdict

from hawkeye_env.judge.parent.baselines import BASELINE_TARGET
from hawkeye_env.judge.parent.launch.start import REPLAY_TARGET, WORKER_TARGET

TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
# ``--target`` of a judge process -> its kind.
TARGET_KINDS = {WORKER_TARGET: "worker", REPLAY_TARGET: "replay", BASELINE_TARGET: "baseline"}


def busy_ticks(text: str) -> tuple[int, int]:
    """``(busy, total)`` ticks of all cores from ``/proc/stat``'s first line (idle and iowait
    are not busy)."""
    fields = [int(x) for x in text.split("\n", 1)[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return sum(fields) - idle, sum(fields)


def process_ticks(text: str) -> int:
    """User + system ticks from a ``/proc/<pid>/stat`` line (the name in parentheses may hold spaces)."""
    rest = text.rsplit(")", 1)[1].split()
    return int(rest[11]) + int(rest[12])  # fields 14 and 15 of the whole line


def kind_of(argv: list[str], pid: int, parent: int) -> str:
    """The kind of process ``argv`` is (see the module docstring)."""
    if pid == parent:
        return "parent"
    name = os.path.basename(argv[0]) if argv else "?"
    if name in ("bwrap", "ptxas"):  # bwrap's own command line holds the judge process's, --target included
        return name
    if "--target" in argv:
        i = argv.index("--target")
        if i + 1 < len(argv):
            return TARGET_KINDS.get(argv[i + 1], "judge_other")
    return "python" if name.startswith("python") else name or "?"


class HostLoad:
    """The sampler (a context manager); ``report()`` once it has stopped."""

    def __init__(self, interval_s: float = 0.5, proc: str = "/proc"):
        self.interval_s, self.proc = interval_s, proc
        self.parent = os.getpid()
        self.busy: list[float] = []  # busy cores per interval
        self.seen: dict[int, tuple[str, int, int]] = {}  # pid -> (kind, first ticks, last ticks)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.available = os.path.exists(os.path.join(proc, "stat"))

    def _read(self, path: str) -> str | None:
        try:
            with open(path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return None

    def _sample_processes(self) -> None:
        for entry in os.listdir(self.proc):
            if not entry.isdigit():
                continue
            pid = int(entry)
            stat = self._read(os.path.join(self.proc, entry, "stat"))
            if stat is None:
                continue
            try:
                ticks = process_ticks(stat)
            except (IndexError, ValueError):
                continue
            if pid in self.seen:
                kind, first, _ = self.seen[pid]
                self.seen[pid] = (kind, first, ticks)
                continue
            cmdline = self._read(os.path.join(self.proc, entry, "cmdline")) or ""
            kind = kind_of([a for a in cmdline.split("\0") if a], pid, self.parent)
            # a process already running when sampling began counts from then; a new one from 0
            self.seen[pid] = (kind, ticks if self._first_pass else 0, ticks)

    def _core_ticks(self) -> tuple[int, int]:
        return busy_ticks(self._read(os.path.join(self.proc, "stat")) or "cpu 0 0 0 0")

    def _sample_cores(self) -> None:
        """Busy cores since the last sample (none when no tick has passed)."""
        now = self._core_ticks()
        if now[1] > self._last[1]:
            self.busy.append((os.cpu_count() or 1) * (now[0] - self._last[0]) / (now[1] - self._last[1]))
        self._last = now

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._sample_cores()
            self._sample_processes()

    def __enter__(self) -> HostLoad:
        if self.available:
            self._last = self._core_ticks()
            self._first_pass = True
            self._sample_processes()
            self._first_pass = False
            self._thread = threading.Thread(target=self._run, daemon=True, name="hawkeye-host-load")
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._sample_cores()  # the last part-interval: a span shorter than one still has a sample
            self._sample_processes()  # what the processes still alive did since the last interval

    def report(self) -> dict:
        """Busy cores (mean, median, 90th percentile, of ``os.cpu_count()``), CPU seconds and
        process counts per kind."""
        if not self.available:
            return {"unavailable": f"no {self.proc}/stat"}
        cpu: dict[str, float] = defaultdict(float)
        count: dict[str, int] = defaultdict(int)
        for kind, first, last in self.seen.values():
            if last > first:
                cpu[kind] += (last - first) / TICKS
                count[kind] += 1
        busy = sorted(self.busy)
        return {
            "cores": os.cpu_count(), "interval_s": self.interval_s, "samples": len(busy),
            "busy_cores_mean": statistics.fmean(busy) if busy else None,
            "busy_cores_median": statistics.median(busy) if busy else None,
            "busy_cores_p90": busy[int(0.9 * (len(busy) - 1))] if busy else None,
            "cpu_s": dict(sorted(cpu.items(), key=lambda kv: -kv[1])),
            "processes": dict(count),
        }


__all__ = ["HostLoad", "busy_ticks", "kind_of", "process_ticks"]
