"""Workers forked from a pre-imported zygote into a sandbox of their own (``forkserver.py``,
``zygote.py``, ``ns_enter.py``): the sandbox's claims hold for them (``test_isolation.py`` runs
through them by default; these add what a fork could leak), and the judge falls back to a fresh
worker where the fork server cannot give one.

Each candidate runs with the static rules off, as an escaped candidate would, and reports from
inside its forward (``test_isolation._probe``).
"""

from __future__ import annotations

import threading
import time

import pytest

from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator
from hawkeye_env.judge.parent.launch import forkserver, isolation
from hawkeye_env.judge.parent.launch.start import WORKER_TARGET
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.shared.verdict import Stage
from hawkeye_env.tasks.registry import get_task, solution_source
from tests.judge.test_isolation import TASK, _probe

pytestmark = pytest.mark.skipif(
    isolation.mode() == isolation.OFF or isolation.probe() != "",
    reason=f"the OS sandbox is off or cannot run here: {isolation.probe() or 'HAWKEYE_SANDBOX=off'}",
)


@pytest.fixture
def fresh_server(monkeypatch):
    """A fork server of the test's own, standbys off: every verdict forks (or falls back) now."""
    monkeypatch.setenv("HAWKEYE_STANDBY", "0")
    monkeypatch.delenv(forkserver.ENV_FLAG, raising=False)
    server = forkserver.ForkServer()
    monkeypatch.setattr(forkserver, "SERVER", server)
    return server


def _worker_zygotes(server: forkserver.ForkServer) -> list:
    return [key for key in server._zygotes if key[0] == WORKER_TARGET]


def test_a_forked_worker_holds_no_privilege_no_descriptor_of_the_judge_and_sees_no_zygote(fresh_server, monkeypatch):
    monkeypatch.setenv("HAWKEYE_TEST_API_KEY", "sk-planted-secret")  # the judge's environment holds a key
    # the report stays short: a worker's error text is cut to reply_check.MAX_TEXT_CHARS
    report = _probe('''
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
caps = {k: int(status[k].strip(), 16) for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")}
fds = {}
for name in os.listdir("/proc/self/fd"):
    try:
        fds[name] = os.readlink("/proc/self/fd/" + name)
    except OSError:
        pass
cmdlines = []
for pid in os.listdir("/proc"):
    if pid.isdigit() and int(pid) != os.getpid():  # its own command line is the zygote's, as forked
        try:
            cmdlines.append(open("/proc/" + pid + "/cmdline", "rb").read().decode(errors="replace"))
        except OSError:
            pass
environ = open("/proc/self/environ", "rb").read().decode(errors="replace")
return {"caps": caps, "no_new_privs": status["NoNewPrivs"].strip(), "ppid": os.getppid(),
        "sid": os.getsid(0) == os.getpid(), "sockets": sorted(v for v in fds.values() if v.startswith("socket:")),
        "key_seen": "sk-planted-secret" in environ or "HAWKEYE_TEST_API_KEY" in environ
            or "sk-planted-secret" in str(dict(os.environ)),
        "processes": len(cmdlines), "zygotes": [c.replace("\\0", " ") for c in cmdlines if "zygote" in c]}
''')
    assert _worker_zygotes(fresh_server), "the verdict did not go through the fork server"
    assert not fresh_server._failed, fresh_server._failed
    assert report["caps"] == {k: 0 for k in report["caps"]}, report["caps"]
    assert report["no_new_privs"] == "1" and report["sid"]
    assert report["ppid"] == 0  # its keeper and the zygote lie outside its PID namespace
    assert len(report["sockets"]) == 1, report["sockets"]  # its connection to the judge only
    assert report["processes"] >= 1 and report["zygotes"] == [], report  # it sees its holder, no zygote
    assert report["key_seen"] is False


def test_a_forked_worker_never_meets_what_an_earlier_candidate_changed(fresh_server):
    """Two verdicts forked from one zygote: the first plants attributes in torch and in the
    worker's module, the second finds neither (each worker is a fork of the untouched zygote)."""
    planted = _probe('''
import sys
import torch
torch._hawkeye_planted = 1
sys.modules["hawkeye_env.judge.sandboxed.candidate.worker"].hawkeye_planted = 1
return "planted"
''')
    found = _probe('''
import sys
import torch
worker = sys.modules["hawkeye_env.judge.sandboxed.candidate.worker"]
return [hasattr(torch, "_hawkeye_planted"), hasattr(worker, "hawkeye_planted")]
''')
    assert planted == "planted" and found == [False, False]
    assert len(_worker_zygotes(fresh_server)) == 1


def test_a_keeper_that_cannot_join_the_sandbox_falls_back_to_a_fresh_worker(fresh_server, monkeypatch):
    """The namespaces sent in the wrong order: the keeper's ``setns`` fails, it reports the error,
    the judge marks the fork server off for that key and starts a fresh sandboxed worker."""
    names = list(forkserver.NS_NAMES)
    names[0], names[1] = names[1], names[0]
    monkeypatch.setattr(forkserver, "NS_NAMES", tuple(names))
    ev = Evaluator(ResultStore(":memory:"), EvalConfig(seed=0))
    v = ev.evaluate(TASK, solution_source(get_task(TASK)), "cpu", use_cache=False)
    assert v.stage is Stage.CORRECT, v.feedback
    assert any(key[0] == WORKER_TARGET for key in fresh_server._failed), fresh_server._failed
    assert not _worker_zygotes(fresh_server)


def test_the_fork_server_can_be_turned_off(fresh_server, monkeypatch):
    monkeypatch.setenv(forkserver.ENV_FLAG, "0")
    ev = Evaluator(ResultStore(":memory:"), EvalConfig(seed=0))
    v = ev.evaluate(TASK, solution_source(get_task(TASK)), "cpu", use_cache=False)
    assert v.stage is Stage.CORRECT, v.feedback
    assert not fresh_server._zygotes and not fresh_server._failed
    assert fresh_server.counts == {"forked": 0, "fresh": 2}  # the candidate's worker and the replay


HELD = '''

import os as _os
import time as _time

_Expert = ModelNew


class ModelNew(_Expert):
    def forward(self, *args):
        deadline = _time.monotonic() + 60
        while not _os.path.exists({release!r}) and _time.monotonic() < deadline:
            _time.sleep(0.02)
        return super().forward(*args)
'''


def test_a_zygote_is_replaced_after_its_forks_and_its_running_workers_finish(fresh_server, monkeypatch, tmp_path):
    """``MAX_FORKS`` 1: the second verdict retires the first's zygote while the first's worker
    is held in its forward (until a file the test makes appears; the sandbox sees the host's files
    read-only); released, that worker finishes with a correct verdict, the second came from a new
    zygote, and the retired one exits after its last keeper. The candidate's worker alone forks
    here (replay off), so one zygote serves each verdict."""
    monkeypatch.setattr(forkserver, "MAX_FORKS", 1)
    monkeypatch.setenv("HAWKEYE_REPLAY", "off")
    ev = Evaluator(ResultStore(":memory:"), EvalConfig(seed=0, static_checks=False, timeout_s=120))
    release = tmp_path / "release"
    held = solution_source(get_task(TASK)) + HELD.format(release=str(release))
    first: list = []
    thread = threading.Thread(target=lambda: first.append(ev.evaluate(TASK, held, "cpu", use_cache=False)))
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while not any(z.forks for z in fresh_server._zygotes.values()) and time.monotonic() < deadline:
            time.sleep(0.02)
        [old] = fresh_server._zygotes.values()
        second = ev.evaluate(TASK, solution_source(get_task(TASK)), "cpu", use_cache=False)
        assert thread.is_alive() and not first, "the first verdict ended before its zygote was retired"
    finally:
        release.touch()
        thread.join(120)
    assert first and first[0].stage is Stage.CORRECT, first and first[0].feedback
    assert second.stage is Stage.CORRECT, second.feedback
    [new] = fresh_server._zygotes.values()
    assert new is not old and old in fresh_server._retired and not fresh_server._failed
    assert fresh_server.counts == {"forked": 2, "fresh": 0}
    deadline = time.monotonic() + 30
    while not old.reaped() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert old.reaped() and new.alive()
