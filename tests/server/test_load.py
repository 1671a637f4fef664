"""The load test of ``bench.served_load`` at CI size: three well-behaved sessions beside one
client of each hostile kind (hoarding sessions, huge bodies, abandoned and hung-up slow steps) on a
scripted server; every well-behaved step gets its own verdict, every stored verdict is its
candidate's, nothing hostile reaches the env, and the server logs no warning or error."""

from __future__ import annotations

import statistics

from bench.served_load import LoadPlan, check_store, run_clients, settle
from bench.served_server import stored_verdicts

PLAN = LoadPlan(sessions=3, steps=3, hostile=1, fast_s=0.05, slow_s=1.0, session_timeout_s=1.0, max_sessions=6,
                huge_mib=6, duration_s=8.0, max_requests=4)


def test_well_behaved_sessions_hold_under_hostile_clients(scripted_server):
    srv = scripted_server(max_sessions=PLAN.max_sessions, session_timeout_s=PLAN.session_timeout_s,
                          max_turns=PLAN.steps)
    tally = run_clients(srv["url"], PLAN, attacked=True)
    status = settle(srv["url"], timeout_s=20)
    assert tally.lost == [] and tally.mismatched == [] and tally.steps == PLAN.sessions * PLAN.steps
    assert statistics.median(tally.latency_s) < PLAN.slow_s  # not queued behind the slow candidates
    hostile = tally.hostile
    assert hostile["hoard"]["opened"] >= 1 and hostile["hoard"].get("closed_1000") == hostile["hoard"]["opened"]
    assert not [o for o in hostile["huge_body"] if o.endswith((":200", ":422", ":answered"))], hostile["huge_body"]
    assert set(hostile["abandon"]) <= {"504", "429"} and hostile["disconnect"].get("hung_up", 0) >= 1
    assert status["in_flight"] == 0 and status["queued"] == 0 and status["failed_batches"] == 0
    assert status["most_in_flight"] <= 2 * status["workers"] and status["cancelled"] + status["given_up"] >= 1
    assert check_store(stored_verdicts(srv["store"]), tally)["wrong"] == []
    assert srv["errors"] == []
