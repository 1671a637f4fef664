"""Load test of the served env: N well-behaved sessions beside M hostile clients of each kind.

    python -m bench.served_load                      # writes bench/results/served-load/served-load-cpu-<date>.json
    python -m bench.served_load --sessions 8 --steps 6 --hostile 2 --out FILE

Each phase starts a fresh server in a subprocess on loopback (``bench.scripted_judge``: the
real served env, guard, queue and results store, with verdicts and their latencies scripted, so
the run measures the server's scheduling, not the CPU interpreter) and stops it at the end.
``alone``: the N sessions only. ``attacked``: the same N sessions while M clients of each hostile
kind run, the hoarders first:

* ``huge_body``: a ``/step`` body of ``--huge-mib`` MiB with its Content-Length, the same body
  chunked, and a WebSocket message of that size;
* ``abandon``: stateless ``/step`` of a slow candidate with ``timeout_s`` 0.1, again and again;
* ``disconnect``: a WebSocket session steps a slow candidate, closes at once, reconnects;
* ``hoard``: opens as many sessions as the server admits and sends nothing.

A well-behaved session connects (retrying while the server is full), resets, and steps fast
candidates (``--fast-s`` of judging each), each with its own tag; a hostile client stops at the
phase's deadline or its request count. Reported per phase: each well-behaved step's latency and
session wait, verdicts lost or not the step's own, every stored verdict checked against its
candidate's script, what each hostile request got, the judge queue's counts, the server's
memory (resident and peak) and its log's ERROR lines and tracebacks.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import httpx

from bench.provenance import provenance
from bench.scripted_judge import TASK, scripted_reply
from bench.served_clients import HOSTILE, honest_session
from bench.served_server import ScriptedServer, stored_verdicts

OUT = Path("bench") / "results" / "served-load"


@dataclass
class LoadPlan:
    """One load test's sizes and times (every client stops by ``duration_s`` or its count)."""

    sessions: int = 8  # well-behaved WebSocket sessions
    steps: int = 6  # steps per well-behaved session (its episode's max_turns)
    hostile: int = 2  # clients of each hostile kind in the attacked phase
    fast_s: float = 0.2  # scripted judging time of a well-behaved candidate
    slow_s: float = 5.0  # scripted judging time of a hostile slow candidate
    session_timeout_s: float = 3.0  # the server's idle timeout (its default is 600 s)
    max_sessions: int = 16  # the server's session cap
    huge_mib: int = 150  # size of a huge request
    duration_s: float = 40.0  # a phase's deadline
    max_requests: int = 12  # most requests one hostile client sends
    workers: int | None = None  # candidates judged at once (the server's default: 2 on CPU)


@dataclass
class Tally:
    """What the clients saw; ``sources`` maps each candidate's tag to its expected stage."""

    latency_s: list[float] = field(default_factory=list)
    session_wait_s: list[float] = field(default_factory=list)
    steps: int = 0
    lost: list[str] = field(default_factory=list)
    mismatched: list[str] = field(default_factory=list)
    hostile: dict = field(default_factory=dict)
    expected: dict = field(default_factory=dict)  # source hash -> stage
    lock: threading.Lock = field(default_factory=threading.Lock)

    def report(self) -> dict:
        with self.lock:
            return {k: v for k, v in vars(self).items() if k not in ("lock", "expected")}


def run_clients(url: str, plan: LoadPlan, attacked: bool) -> Tally:
    """Run the well-behaved sessions (and, when ``attacked``, the hostile clients) against ``url``."""
    tally = Tally()
    deadline = time.monotonic() + plan.duration_s
    threads = []
    if attacked:
        for kind, client in HOSTILE.items():
            tally.hostile[kind] = {}
            for k in range(plan.hostile):
                threads.append(threading.Thread(target=client, args=(url, plan, tally, k, deadline), daemon=True))
        for t in threads:  # hoarders first, then the rest: well-behaved sessions find the server full
            t.start()
        time.sleep(0.5)
    honest = [threading.Thread(target=honest_session, args=(url, plan, tally, i, deadline), daemon=True)
              for i in range(plan.sessions)]
    for t in honest:
        t.start()
    for t in honest + threads:
        t.join(max(0.0, deadline - time.monotonic()) + 30)
    return tally


def settle(url: str, timeout_s: float = 60.0) -> dict:
    """``GET /judge`` once nothing is waiting or being judged (abandoned slow candidates finish)."""
    end = time.monotonic() + timeout_s
    while True:
        status = httpx.get(url + "/judge", timeout=10).json()
        if (status["in_flight"] == 0 and status["queued"] == 0) or time.monotonic() > end:
            return status


def check_store(rows: list[dict], tally: Tally) -> dict:
    """Every stored verdict against its candidate's script: ``wrong`` lists the ones that differ."""
    wrong = [r["source_hash"] for r in rows if tally.expected.get(r["source_hash"]) != r["stage"]]
    return {"rows": len(rows), "wrong": wrong}


def run_phase(plan: LoadPlan, attacked: bool, workdir: Path) -> dict:
    """One phase on a fresh subprocess server; see the module docstring."""
    with ScriptedServer(workdir, plan) as server:
        tally = run_clients(server.url, plan, attacked)
        judge = settle(server.url)
        memory = server.memory()
    return {"clients": tally.report(), "judge": judge, "store": check_store(stored_verdicts(server.store), tally),
            "server": {**memory, **server.log_summary()}}


def run_record(argv: list[str]) -> dict:
    """``bench.provenance`` of this run, its versions with the serving stack's."""
    from importlib.metadata import version

    record = provenance("cpu", "bench.served_load", argv)
    for dist in ("hawkeye-env", "openenv-core", "uvicorn", "fastapi", "websockets"):
        record["versions"][dist] = version(dist)
    return record


def main(argv: list[str] | None = None) -> int:
    defaults = LoadPlan()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for name, value in asdict(defaults).items():
        parser.add_argument("--" + name.replace("_", "-"), type=type(value) if value is not None else int,
                            default=value)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--workdir", type=Path, default=Path("out") / "served-load")
    args = parser.parse_args(argv)
    plan = LoadPlan(**{k: getattr(args, k) for k in asdict(defaults)})
    result = {**run_record(sys.argv[1:] if argv is None else argv), "task": TASK, "plan": asdict(plan), "phases": {}}
    out = args.out or OUT / f"served-load-cpu-{result['date']}.json"
    for name, attacked in (("alone", False), ("attacked", True)):
        result["phases"][name] = run_phase(plan, attacked, args.workdir / name)
        print(name, json.dumps({k: v for k, v in result["phases"][name].items() if k != "clients"})[:400])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out}")
    return 0


__all__ = ["LoadPlan", "Tally", "check_store", "run_clients", "run_phase", "scripted_reply", "settle"]

if __name__ == "__main__":
    raise SystemExit(main())
