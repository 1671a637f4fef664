"""``bench.provenance``: the command line a runner was started with and the keys every results
file of the developer benchmarks carries (the commit is ``evals.provenance``'s)."""

from __future__ import annotations

from bench.provenance import command_line, provenance


def test_the_command_line_of_a_module():
    assert command_line("bench.tasks", ["--device", "cuda", "--tasks", "a b"]) == (
        "python -m bench.tasks --device cuda --tasks 'a b'")
    assert command_line("bench.judge", []) == "python -m bench.judge"


def test_a_cpu_run_records_every_key(monkeypatch):
    import bench.provenance as bp

    monkeypatch.setattr(bp, "git_commit", lambda: "abc+dirty")
    p = provenance("cpu", "bench.judge", ["--device", "cpu"])
    assert set(p) == {"date", "gpu", "driver", "versions", "commit", "command"}
    assert (p["gpu"], p["driver"], p["commit"]) == ("cpu", "", "abc+dirty")
    assert p["command"] == "python -m bench.judge --device cpu"
    assert {"python", "torch", "triton"} <= set(p["versions"]) and "cuda" not in p["versions"]
    assert len(p["date"]) == 10 and p["date"][4] == "-"
