"""Each claim of the OS sandbox (``hawkeye_env/judge/parent/launch/isolation.py``), checked by a candidate that
tries to break it from inside its worker (docs/threat-model.md #21, #22).

The candidates are run with the static rules off, as an escaped candidate would be: they import
``os``, ``socket`` and ``subprocess`` freely. Each one does its attempt inside ``forward`` and
reports what happened by raising, so the verdict's error carries the report; the test then also
checks the effect from outside (the file is not there, the process is still alive, ...). With the
fork server on (the default), every worker here is a fork of the pre-imported zygote, and a test
whose worker started fresh instead fails (``forkserver.py``).
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator, software_versions
from hawkeye_env.judge.parent.launch import forkserver, isolation
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.shared.verdict import Stage
from hawkeye_env.tasks.registry import get_task, register_tasks_from, solution_source
from tests.conftest import registry_restored

pytestmark = pytest.mark.skipif(
    isolation.mode() == isolation.OFF or isolation.probe() != "",
    reason=f"the OS sandbox is off or cannot run here: {isolation.probe() or 'HAWKEYE_SANDBOX=off'}",
)

TASK = "vector_add_fp32"


@pytest.fixture(autouse=True)
def _claims_hold_for_forked_workers():
    """Each claim is checked on the worker the default judge gives: a forked one."""
    fresh = forkserver.SERVER.counts["fresh"]
    yield
    if forkserver.enabled():
        assert forkserver.SERVER.counts["fresh"] == fresh, "a sandboxed worker started fresh, not forked"

PROBE = '''
import json, os
import torch
from torch import nn


def attempt():
{body}


class ModelNew(nn.Module):
    def forward(self, a, b):
        raise RuntimeError("<" + "REPORT>" + json.dumps(attempt()) + "</" + "REPORT>")
'''


def _probe(body: str, evaluator: Evaluator | None = None) -> dict:
    """Judge a candidate whose forward runs ``body`` (a function body returning a JSON-able
    report) and return the report."""
    source = PROBE.format(body="\n".join("    " + line for line in body.strip().splitlines()))
    ev = evaluator or Evaluator(ResultStore(":memory:"), EvalConfig(seed=0, static_checks=False, timeout_s=120))
    v = ev.evaluate(TASK, source, "cpu", use_cache=False)
    assert v.stage is Stage.RUNTIME_ERROR, v.feedback
    found = re.findall(r"<REPORT>(.*?)</REPORT>", v.error, re.S)
    assert found, v.error
    return json.loads(found[-1])


def _try_write(path: Path) -> str:
    return f'''
try:
    with open({str(path)!r}, "w") as f:
        f.write("planted")
    return "written"
except OSError as exc:
    return type(exc).__name__ + ": " + str(exc)
'''


def test_the_store_cannot_be_written_from_inside(tmp_path):
    store = tmp_path / "results.sqlite3"
    ev = Evaluator(ResultStore(store), EvalConfig(seed=0, static_checks=False, timeout_s=120))
    before = store.read_bytes()
    report = _probe(_try_write(store), ev)
    assert report != "written" and "Read-only file system" in report
    assert store.read_bytes()[:100] == before[:100]


def test_no_folder_on_sys_path_or_the_package_can_be_written(tmp_path):
    import hawkeye_env

    package = Path(hawkeye_env.__file__).parent / f"planted_{uuid.uuid4().hex}.py"
    on_path = Path(sys.path[1] if sys.path[0] == "" else sys.path[0]) / f"planted_{uuid.uuid4().hex}.py"
    for target in (package, on_path, tmp_path / "planted.py"):
        report = _probe(_try_write(target))
        assert report != "written", target
        assert not target.exists()


def test_tmp_is_read_only_and_shm_private_and_other_scratch_folders_hidden():
    name = f"hawkeye-probe-{uuid.uuid4().hex}"
    report = _probe(f'''
out = {{}}
try:
    open("/tmp/{name}", "w").write("x")
    out["tmp"] = "written"
except OSError as exc:
    out["tmp"] = type(exc).__name__
open("/dev/shm/{name}", "w").write("x")
here = os.getcwd()
out["shm"] = [p for p in os.listdir("/dev/shm") if not here.startswith("/dev/shm/" + p)]
out["siblings"] = os.listdir(os.path.dirname(here))
return out
''')
    assert report["tmp"] == "OSError" or report["tmp"].endswith("Error") and report["tmp"] != "written"
    assert report["shm"] == [name] and not Path(f"/dev/shm/{name}").exists()
    assert len(report["siblings"]) == 1  # its own scratch folder only


def test_the_scratch_folder_is_the_only_writable_one_and_it_is_removed():
    report = _probe('''
here = os.getcwd()
open(os.path.join(here, "mine.txt"), "w").write("x")
return [here, os.environ.get("HOME"), os.environ.get("TRITON_CACHE_DIR", "")]
''')
    scratch, home, triton_cache = report
    assert home == scratch and triton_cache.startswith(scratch)
    assert os.path.basename(scratch).startswith("hawkeye-worker-")
    assert not os.path.exists(scratch)


def test_a_double_forked_setsid_daemon_dies_with_the_worker():
    marker = f"hawkeye-daemon-{uuid.uuid4().hex}"
    _probe(f'''
import subprocess
pid = os.fork()
if pid == 0:
    os.setsid()
    if os.fork() == 0:
        os.execvp("sleep", ["sleep", "300", "{marker}"])
    os._exit(0)
os.waitpid(pid, 0)
return "forked"
''')
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        alive = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()
        if not alive:
            break
        time.sleep(0.2)
    assert not alive, f"daemon {alive} outlived its worker"


def test_other_processes_cannot_be_seen_or_signalled():
    victim = subprocess.Popen(["sleep", "60"])
    try:
        report = _probe(f'''
import signal
out = {{"pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit())}}
for pid in ({victim.pid}, {os.getpid()}, 1):
    try:
        os.kill(pid, signal.SIGKILL if pid != 1 else 0)
        out[str(pid)] = "signalled"
    except OSError as exc:
        out[str(pid)] = type(exc).__name__
return out
''')
        assert victim.poll() is None, "a candidate killed a process outside its sandbox"
        assert report[str(victim.pid)] == "ProcessLookupError" or victim.pid not in report["pids"]
        assert report[str(os.getpid())] == "ProcessLookupError" or os.getpid() not in report["pids"]
        assert len(report["pids"]) < 10, report["pids"]  # its own namespace: a handful of processes
    finally:
        victim.kill()
        victim.wait()


def test_no_network_not_even_the_hosts_loopback():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    try:
        report = _probe(f'''
import socket
s = socket.socket()
s.settimeout(3)
try:
    s.connect(("127.0.0.1", {port}))
    return "connected"
except OSError as exc:
    return type(exc).__name__
''')
        assert report != "connected"
    finally:
        server.close()


def test_secrets_in_the_environment_do_not_reach_the_worker(monkeypatch):
    monkeypatch.setenv("WANDB_API_KEY", "secret-wandb-key")
    monkeypatch.setenv("OPENAI_API_KEY", "secret-openai-key")
    # the judge's own marker of its worker processes (registration.JUDGE_PROCESS_ENV) spells "KEY" too
    report = _probe('return {k: v for k, v in os.environ.items() if ("secret" in v or "KEY" in k) '
                    'and k != "HAWKEYE_JUDGE_PROCESS"}')
    assert report == {}


def test_home_credentials_and_caches_are_hidden(tmp_path, monkeypatch):
    monkeypatch.setenv("HAWKEYE_STANDBY", "0")  # a standby started earlier saw the real HOME
    home = tmp_path / "home"
    (home / ".cache" / "hawkeye-env").mkdir(parents=True)
    (home / ".cache" / "hawkeye-env" / "results.sqlite3").write_text("store")
    (home / ".netrc").write_text("machine api.wandb.ai password secret")
    monkeypatch.setenv("HOME", str(home))
    report = _probe(f'''
try:
    netrc = open({str(home / ".netrc")!r}).read()
except OSError as exc:
    netrc = type(exc).__name__
return [os.listdir({str(home / ".cache")!r}), netrc]
''')
    assert report[0] == [] and "secret" not in report[1]


def test_unprivileged_inside_every_capability_dropped():
    report = _probe('''
caps = [line.split()[1] for line in open("/proc/self/status") if line.startswith("CapEff")]
return [os.getuid(), os.getgid(), caps[0]]
''')
    assert report[:2] == [isolation.SANDBOX_UID, isolation.SANDBOX_UID]
    assert int(report[2], 16) == 0


def test_a_task_folder_on_sys_path_is_not_loaded_by_the_parent(tmp_path, monkeypatch):
    """A folder that merely lies on ``sys.path`` (the console script's ``bin``, say) is never
    scanned for tasks, marker or not: only configured folders are."""
    from hawkeye_env.tasks import registry

    planted = tmp_path / "planted"
    planted.mkdir()
    (planted / registry.TASK_FOLDER_MARKER).write_text("")
    (planted / "evil_task.py").write_text("raise SystemExit('imported by the judge')\n")
    monkeypatch.syspath_prepend(str(planted))
    registry._specs.cache_clear()
    assert str(planted) not in registry.user_task_dirs()
    assert get_task(TASK).id == TASK
    assert "evil_task" not in sys.modules


def test_the_judge_refuses_to_run_without_the_sandbox_unless_told(monkeypatch):
    monkeypatch.setattr(isolation, "probe", lambda: "user namespaces are disabled")
    with pytest.raises(isolation.SandboxUnavailable, match="HAWKEYE_SANDBOX=off"):
        Evaluator(ResultStore(":memory:"), EvalConfig())
    monkeypatch.setenv(isolation.ENV, "off")
    ev = Evaluator(ResultStore(":memory:"), EvalConfig(seed=0))
    v = ev.evaluate(TASK, solution_source(get_task(TASK)), "cpu")
    assert v.stage is Stage.CORRECT and v.versions["sandbox"] == "off"


def test_every_verdict_names_its_sandbox():
    assert software_versions("cpu")["sandbox"] == "bwrap"
    v = Evaluator(ResultStore(":memory:"), EvalConfig(seed=0)).evaluate(TASK, solution_source(get_task(TASK)), "cpu")
    assert v.stage is Stage.CORRECT and v.versions["sandbox"] == "bwrap"


def test_user_task_folders_still_work_inside_the_sandbox(tmp_path):
    """A configured task folder is read (read-only) by the sandboxed worker."""
    folder = tmp_path / "tasks"
    folder.mkdir()
    module = get_task(TASK).module
    text = (Path(__file__).parents[2] / (module.replace(".", "/") + ".py")).read_text()
    text = text.replace('id="vector_add_fp32"', 'id="sandboxed_add"')
    text = text.replace(f'module="{module}"', 'module="sandboxed_add"')
    (folder / "sandboxed_add.py").write_text(text)
    with registry_restored():  # later tests that list every task do not meet it
        specs = register_tasks_from(folder)
        assert [s.id for s in specs] == ["sandboxed_add"]
        v = Evaluator(ResultStore(":memory:"), EvalConfig(seed=0)).evaluate(
            "sandboxed_add", solution_source(get_task(TASK)), "cpu")
    assert v.stage is Stage.CORRECT, v.feedback
