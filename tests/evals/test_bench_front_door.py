"""``python -m bench`` lists every developer runner and runs one by name; an unknown name is refused."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench.__main__ import runners

REPO = Path(__file__).resolve().parents[2]


def test_every_runner_is_listed_with_its_docstring():
    table = runners()
    assert {"calibrate", "honest_corpus", "benchmarks_doc", "kerneldev.sweeps.gemm"} <= set(table)
    assert "tables" not in table and "provenance" not in table  # helpers, not runners
    assert all(line for line in table.values()), [n for n, line in table.items() if not line]


def test_the_front_door_lists_and_runs_and_refuses():
    def run(*args):
        return subprocess.run([sys.executable, "-m", "bench", *args], cwd=REPO, capture_output=True, text=True,
                              timeout=120)

    listed = run()
    assert listed.returncode == 0 and "honest_corpus" in listed.stdout
    helped = run("benchmarks_doc", "--help")
    assert helped.returncode == 0 and "usage" in helped.stdout.lower()
    refused = run("no_such_runner")
    assert refused.returncode == 2 and "unknown runner" in refused.stderr
