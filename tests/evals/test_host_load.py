"""``bench.host_load``: busy cores and CPU seconds per kind of process, read from ``/proc``."""

from __future__ import annotations

import subprocess
import sys

import pytest

from bench.host_load import HostLoad, busy_ticks, kind_of, process_ticks
from hawkeye_env.judge.parent.launch.start import REPLAY_TARGET, WORKER_TARGET


def test_a_busy_child_is_counted_under_its_kind():
    if not HostLoad().available:
        pytest.skip("needs Linux /proc")
    with HostLoad(interval_s=0.2) as load:
        # spins for 1.2 s of its own CPU time, however busy the machine's other cores are
        spin = "import time\nwhile time.process_time() < 1.2: pass"
        child = subprocess.Popen([sys.executable, "-c", spin, "--target", REPLAY_TARGET])
        assert child.wait() == 0
    report = load.report()
    assert report["cpu_s"].get("replay", 0.0) > 0.8, report
    # the whole host is sampled, so another test's replay process may be counted too: this one must be
    kind, first, last = load.seen[child.pid]
    assert kind == "replay" and last - first > 0, load.seen[child.pid]
    assert report["processes"]["replay"] >= 1
    assert report["busy_cores_mean"] > 0.3 and report["samples"] >= 5


def test_a_span_shorter_than_one_interval_still_has_its_busy_cores_and_live_processes():
    if not HostLoad().available:
        pytest.skip("needs Linux /proc")
    # waits for a byte, spins 0.4 s of its own CPU time, says so, and lives on past the span
    spin = ("import sys, time\nsys.stdin.read(1)\nt = time.process_time()\nwhile time.process_time() < t + 0.4: pass\n"
            "sys.stdout.write('x'); sys.stdout.flush()\ntime.sleep(60)")
    child = subprocess.Popen([sys.executable, "-c", spin, "--target", WORKER_TARGET],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        with HostLoad(interval_s=30.0) as load:  # no interval ends inside the span
            child.stdin.write(b"g")
            child.stdin.flush()
            assert child.stdout.read(1) == b"x"
    finally:
        child.kill()
        child.wait()
    report = load.report()
    assert report["samples"] == 1 and report["busy_cores_mean"] > 0, report  # the last part-interval
    assert report["cpu_s"].get("worker", 0.0) > 0.1, report  # the child was alive at the last pass


def test_kinds_and_tick_parsing():
    assert kind_of(["python", "-m", "x", "--target", WORKER_TARGET], 5, 1) == "worker"
    assert kind_of(["/usr/bin/bwrap", "--ro-bind"], 5, 1) == "bwrap"
    # a sandbox's bwrap carries the worker's command line: it is bwrap, not the worker
    assert kind_of(["/x/bwrap", "--", "python", "--target", WORKER_TARGET], 5, 1) == "bwrap"
    assert kind_of(["python3"], 1, 1) == "parent"
    assert kind_of(["/opt/ptxas", "-arch"], 5, 1) == "ptxas"
    assert process_ticks("42 (a b) S 1 2 3 4 5 6 7 8 9 10 11 12 13") == 11 + 12
    assert busy_ticks("cpu  10 0 5 80 5 0 0 0\ncpu0 ...") == (15, 100)
