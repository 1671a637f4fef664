"""What a candidate prints never reaches the judge's console or log, and comes back as feedback.

Worker processes write their stdout and stderr (file descriptors 1 and 2) to a private, unlinked
file (``output_capture.WorkerOutput``); the parent reads a bounded head and tail of it once the worker is
dead and closes it, and a failed candidate's verdict shows it, labelled. These tests judge
candidates that print (``print``, ``os.write`` on both descriptors) and then raise, hang, exit or
flood 50 MB, with fresh workers and with standbys.

``capfd`` captures the test process's own descriptors 1 and 2, which every worker (started by
``spawn.launch`` from this process) would inherit if it kept them: such a worker would write
into ``capfd`` and fail the test. A judge run in a subprocess whose own stdout and stderr are
captured covers the same end to end.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import tracemalloc

import pytest

from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator
from hawkeye_env.judge.parent.launch import output_capture, run_job, standby
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.shared.verdict import Stage

TASK = "vector_add_fp32"
LIMIT = 8 << 30
LABEL = "candidate output (stdout and stderr"

# Static checks are off in this module: they forbid ``import os``, and these candidates use it to
# write to the raw descriptors as C extensions and subprocesses (ptxas) do.
LOUD = """
import os
import sys

import torch
from torch import nn

print("FIRST-LINE-AT-IMPORT")


class ModelNew(nn.Module):
    def forward(self, a, b):
        for i in range(2000):
            print(f"stdout-noise {i} " + "x" * 60)
        for i in range(2000):
            os.write(2, f"stderr-noise {i} ".encode() + b"y" * 60 + b"\\n")
        print("FD1-IS " + os.readlink("/proc/self/fd/1"))
        print("ptxas error   : Entry function uses too much data: Insufficient registers", file=sys.stderr)
        raise RuntimeError("candidate gave up")
"""

FLOOD = """
import os

import torch
from torch import nn


class ModelNew(nn.Module):
    def forward(self, a, b):
        chunk = b"z" * (1 << 20)
        for _ in range(50):
            os.write(1, chunk)
        print("\\nEND-OF-FLOOD " + os.readlink("/proc/self/fd/1"))
        raise RuntimeError("flooded")
"""

DIES = """
import os
import time

import torch
from torch import nn


class ModelNew(nn.Module):
    def forward(self, a, b):
        print("LAST-WORDS-ON-STDOUT FD1-IS " + os.readlink("/proc/self/fd/1"))
        os.write(2, b"LAST-WORDS-ON-FD2\\n")
        {how}
"""

MARKERS = ("FIRST-LINE-AT-IMPORT", "stdout-noise", "stderr-noise", "FD1-IS", "Insufficient registers",
           "END-OF-FLOOD", "zzzz", "LAST-WORDS", "WARM-UP-NOISE", "JOB-OUTPUT")


def _output_files() -> set[str]:
    """The worker output files this process holds open (idle standbys', workers' in flight)."""
    held = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if os.path.basename(target).startswith("hawkeye-output-"):
            held.add(target)
    return held


@pytest.fixture
def judge_fds(capfd):
    """``capfd`` (see the module docstring); no output file of this test is still open
    afterwards."""
    before = _output_files()
    yield capfd
    assert _output_files() <= before


@pytest.fixture(params=["fresh", "standby"])
def pool(request, monkeypatch):
    """A private standby pool, on or off; shut down (its idle standbys ended) after the test."""
    monkeypatch.setenv(standby.ENV_FLAG, "1" if request.param == "standby" else "0")
    private = standby.StandbyPool()
    monkeypatch.setattr(standby, "POOL", private)
    yield private
    private.shutdown()


def _evaluator(timeout_s: float = 120) -> Evaluator:
    return Evaluator(ResultStore(":memory:"), EvalConfig(timeout_s=timeout_s, seed=0, static_checks=False))


def _judge(source: str, pool: standby.StandbyPool, timeout_s: float = 120):
    """The verdict of ``source``; with standbys on, judged twice so the second uses a standby."""
    ev = _evaluator(timeout_s)
    v = ev.evaluate(TASK, source, "cpu", use_cache=False)
    if standby.enabled("cpu"):
        v = ev.evaluate(TASK, source, "cpu", use_cache=False)
        assert v.profile.get("worker.standby") == 1.0
    return v


def _assert_not_on_judge_fds(capfd) -> None:
    out, err = capfd.readouterr()
    for marker in MARKERS:
        assert marker not in out, f"{marker!r} reached the judge's stdout: {out[-2000:]}"
        assert marker not in err, f"{marker!r} reached the judge's stderr: {err[-2000:]}"


def _assert_file_unlinked(text: str) -> None:
    """The candidate's descriptor 1 (``FD1-IS``/``END-OF-FLOOD <target>``) was a file with no name
    left in the temporary folder: nothing can be left behind there."""
    target = re.search(r"(?:FD1-IS|END-OF-FLOOD) (.+?) \(deleted\)", text).group(1)
    assert os.path.dirname(target) == tempfile.gettempdir()
    assert os.path.basename(target).startswith("hawkeye-output-")
    assert not os.path.exists(target)


def test_printed_output_reaches_the_feedback_not_the_judges_stderr(judge_fds, pool):
    v = _judge(LOUD, pool)
    _assert_not_on_judge_fds(judge_fds)
    assert v.stage is Stage.RUNTIME_ERROR, v.feedback
    assert "RuntimeError: candidate gave up" in v.error
    # both descriptors, the beginning and the end, labelled
    assert LABEL in v.error and LABEL in v.feedback
    shown = v.error.split(LABEL, 1)[1]
    assert "bytes omitted" in shown
    assert "FIRST-LINE-AT-IMPORT" in shown
    assert "stderr-noise 1999 " in shown and "Insufficient registers" in shown
    assert "Insufficient registers" in v.feedback
    assert len(shown) < output_capture.OUTPUT_HEAD_BYTES + output_capture.OUTPUT_TAIL_BYTES + 200
    _assert_file_unlinked(shown)


def test_a_50_mb_flood_keeps_the_verdict_and_the_judges_memory_bounded(judge_fds, pool):
    tracemalloc.start()
    try:
        v = _judge(FLOOD, pool)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    _assert_not_on_judge_fds(judge_fds)
    assert v.stage is Stage.RUNTIME_ERROR, v.feedback[:3000]
    assert "RuntimeError: flooded" in v.error
    assert "END-OF-FLOOD" in v.error and "bytes omitted" in v.error
    last_line = re.search(r"END-OF-FLOOD .+", v.error).group(0)
    written = (50 << 20) + len(last_line) + 2  # + the two newlines
    counted = int(re.search(r"stdout and stderr, (\d+) bytes", v.error).group(1))
    # Folding punches a hole over what it read (output_capture.WorkerOutput), so nothing is lost;
    # where it must truncate instead, what lands between a read and the truncation is.
    assert counted == written if _can_punch() else written // 2 <= counted <= written
    assert len(v.feedback) < 12_000 and len(v.to_json()) < 20_000
    assert peak < 16 << 20, f"the judge held {peak / 2**20:.0f} MiB of Python memory"
    _assert_file_unlinked(v.error)


@pytest.mark.parametrize("how, failure", [
    ("time.sleep(600)", "timeout: no verdict within 10 s"),
    ("os._exit(7)", "crash: worker exited with code 7 before replying"),
])
def test_a_killed_or_dead_worker_still_shows_what_it_printed(judge_fds, monkeypatch, how, failure):
    monkeypatch.setenv(standby.ENV_FLAG, "0")
    v = _evaluator(timeout_s=10).evaluate(TASK, DIES.format(how=how), "cpu", use_cache=False)
    _assert_not_on_judge_fds(judge_fds)
    assert v.stage is Stage.RUNTIME_ERROR
    assert v.error.startswith(failure + "\n" + LABEL), v.error
    assert "LAST-WORDS-ON-STDOUT" in v.error and "LAST-WORDS-ON-FD2" in v.error
    _assert_file_unlinked(v.error)


def _noisy_standby(conn, device, memory_limit_bytes, standby_lane=None):
    """A stand-in worker: prints during its "warm-up", says ready, prints after its job, dies."""
    from hawkeye_env.judge.sandboxed.candidate.worker import _send

    print("WARM-UP-NOISE on stdout", flush=True)
    os.write(2, b"WARM-UP-NOISE on fd 2\n")
    _send(conn, {"kind": "ready", "setup_s": 0.0})
    conn.recv_bytes()
    print("JOB-OUTPUT", flush=True)
    os._exit(3)


def _fails_warm_up(conn, device, memory_limit_bytes, standby_lane=None):
    print("WARM-UP-NOISE before failing", flush=True)
    os._exit(5)


def test_a_standbys_warm_up_output_is_dropped_not_shown_to_its_candidate(judge_fds, monkeypatch):
    monkeypatch.setenv(standby.ENV_FLAG, "1")
    pool = standby.StandbyPool()
    try:
        assert pool.take(_noisy_standby, "cpu", None, LIMIT) is None
        ready = pool.take(_noisy_standby, "cpu", None, LIMIT)
        assert ready is not None and ready.failure == ""
        outcome = run_job.run_job(_noisy_standby, {"device": "cpu"}, 30, LIMIT, None, ready.handoff())
        assert outcome.failure == "crash" and "code 3" in outcome.detail
        assert outcome.output_tail == "JOB-OUTPUT\n" and outcome.output_bytes == len("JOB-OUTPUT\n")

        assert pool.take(_fails_warm_up, "cpu", None, LIMIT) is None
        [queue] = [q for key, q in pool._idle.items() if key[0].endswith(":_fails_warm_up")]
        [broken] = queue
        assert pool.take(_fails_warm_up, "cpu", None, LIMIT) is None  # waits for it: it failed
        assert "warm-up output (end):\nWARM-UP-NOISE before failing" in broken.failure
    finally:
        pool.shutdown()
    _assert_not_on_judge_fds(judge_fds)


JUDGE_IN_A_SUBPROCESS = """
import json
import sys

from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator
from hawkeye_env.judge.parent.store import ResultStore

source = open(sys.argv[1]).read()
ev = Evaluator(ResultStore(":memory:"), EvalConfig(timeout_s=120, seed=0, static_checks=False))
verdicts = [ev.evaluate("vector_add_fp32", source, "cpu", use_cache=False) for _ in range(2)]
print(json.dumps([[v.stage.value, "Insufficient registers" in v.feedback, "FIRST-LINE-AT-IMPORT" in v.error,
                   v.profile.get("worker.standby", 0.0)] for v in verdicts]))
"""


def test_forkserver_workers_and_standbys_keep_out_of_the_judges_output(tmp_path):
    """The default path (forkserver, standbys on) in a fresh judge process: its own stdout holds
    only the script's line, its stderr none of the candidate's output."""
    (tmp_path / "candidate.py").write_text(LOUD)
    (tmp_path / "judge.py").write_text(JUDGE_IN_A_SUBPROCESS)
    env = {**os.environ, standby.ENV_FLAG: "1"}
    out = subprocess.run([sys.executable, str(tmp_path / "judge.py"), str(tmp_path / "candidate.py")],
                         capture_output=True, text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    for marker in MARKERS:
        assert marker not in out.stdout and marker not in out.stderr, (out.stdout[-2000:], out.stderr[-2000:])
    assert json.loads(out.stdout) == [["runtime_error", True, True, 0.0], ["runtime_error", True, True, 1.0]]


def _can_punch() -> bool:
    with tempfile.TemporaryFile() as f:
        f.write(b"x" * 8192)
        f.flush()
        return output_capture.punch_hole(f.fileno(), 4096)


def _writer(out: output_capture.WorkerOutput) -> int:
    """A descriptor writing to ``out``, as the worker's would (a duplicate of the parent's)."""
    return os.dup(out._fd)


def test_worker_output_keeps_a_bounded_head_and_tail(monkeypatch):
    monkeypatch.setattr(output_capture, "OUTPUT_FILE_MAX_BYTES", 4 << 20)
    out = output_capture.WorkerOutput.create()
    fd = _writer(out)
    try:
        assert os.readlink(f"/proc/self/fd/{fd}").endswith(" (deleted)")  # unlinked from the start
        os.write(fd, b"HEAD-START")
        chunk = b"m" * (1 << 20)
        for _ in range(50):
            os.write(fd, chunk)
            out.bound()  # the parent's poll: folds and frees past the cap
            assert os.fstat(fd).st_blocks * 512 <= (6 << 20)  # space held, holes excluded
        os.write(fd, b"\x1b[31mred\x1b[0m TAIL-END\r\n")
    finally:
        os.close(fd)
    text, total = out.close()
    assert total == 10 + (50 << 20) + len(b"\x1b[31mred\x1b[0m TAIL-END\r\n")
    assert text.startswith("HEAD-START" + "m" * (output_capture.OUTPUT_HEAD_BYTES - 10) + "\n[... ")
    omitted = total - output_capture.OUTPUT_HEAD_BYTES - output_capture.OUTPUT_TAIL_BYTES
    assert f"[... {omitted} bytes omitted ...]" in text
    assert text.endswith("\\x1b[31mred\\x1b[0m TAIL-END\n")  # control characters escaped
    assert len(text) < output_capture.OUTPUT_HEAD_BYTES + output_capture.OUTPUT_TAIL_BYTES + 100
    assert out.close() == (text, total)  # idempotent


def test_a_write_that_lands_while_the_parent_folds_is_not_lost(monkeypatch):
    """The worker appends between the parent's read and the freeing of what it read: the hole
    punched over the read bytes leaves the new ones in place, so the count and the tail are exact."""
    if not _can_punch():
        pytest.skip("the temporary folder's file system cannot punch holes: the fold truncates there")
    monkeypatch.setattr(output_capture, "OUTPUT_FILE_MAX_BYTES", 1 << 20)
    out = output_capture.WorkerOutput.create()
    fd = _writer(out)
    real = output_capture.punch_hole

    def racing(f, length):
        os.write(fd, b"LANDED-DURING-THE-FOLD\n")
        return real(f, length)

    monkeypatch.setattr(output_capture, "punch_hole", racing)
    try:
        os.write(fd, b"x" * (2 << 20))
        out.bound()
        monkeypatch.setattr(output_capture, "punch_hole", real)
        os.write(fd, b"END\n")
    finally:
        os.close(fd)
    text, total = out.close()
    assert total == (2 << 20) + len(b"LANDED-DURING-THE-FOLD\n") + len(b"END\n")
    assert text.endswith("LANDED-DURING-THE-FOLD\nEND\n")


@pytest.mark.parametrize("size", [0, 17, 1024, 2000, 4096, 4097, 9000])
def test_worker_output_is_whole_when_it_fits(size):
    data = bytes(ord("a") + (i * 7 + i // 26) % 26 for i in range(size))
    out = output_capture.WorkerOutput.create()
    fd = _writer(out)
    os.write(fd, data)
    os.close(fd)
    text, total = out.close()
    assert total == size
    limit = output_capture.OUTPUT_HEAD_BYTES + output_capture.OUTPUT_TAIL_BYTES
    if size <= limit:
        assert text == data.decode()
    else:
        head, tail = data[: output_capture.OUTPUT_HEAD_BYTES], data[-output_capture.OUTPUT_TAIL_BYTES:]
        assert text == f"{head.decode()}\n[... {size - limit} bytes omitted ...]\n{tail.decode()}"
