"""What a worker that took over its own process can do to the parent, and the limits that hold
(threat model #22, #23): a stalled or flooding connection, a scratch folder filled to exhaust the
host's memory, an error text of many megabytes. Each candidate runs with the static rules off, as
an escaped candidate would; the batch it shares with an honest candidate must return, with the
honest verdict intact, within the worker's timeout."""

from __future__ import annotations

import time

import pytest

from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator, evaluate_many
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.parent.validate.reply_check import MAX_TEXT_CHARS
from hawkeye_env.judge.shared.verdict import Stage
from hawkeye_env.tasks.registry import get_task, solution_source

TASK = "vector_add_fp32"
HONEST = solution_source(get_task(TASK))
TIMEOUT_S = 20.0

HEADER = """
import gc, io, os, struct, time
import torch
from torch import nn
from multiprocessing.connection import Connection


def _conn():
    return next(o for o in gc.get_objects() if isinstance(o, Connection) and not o.closed)
"""

STALLED = HEADER + """
class ModelNew(nn.Module):
    def forward(self, a, b):
        os.write(_conn().fileno(), struct.pack("!i", 1 << 20) + b"x")  # a 1 MiB message, 1 byte of it
        time.sleep(10 ** 6)
"""

FLOOD = HEADER + """
class ModelNew(nn.Module):
    def forward(self, a, b):
        buf = io.BytesIO()
        torch.save({"kind": "progress", "violations": []}, buf)
        message, conn = buf.getvalue(), _conn()
        while True:
            conn.send_bytes(message)
"""

FILL_SCRATCH = HEADER + """
class ModelNew(nn.Module):
    def forward(self, a, b):
        chunk = b"\\0" * (64 << 20)
        with open("fill.bin", "wb") as f:
            for _ in range(64):
                f.write(chunk)
        time.sleep(10 ** 6)
"""

# 10,001 empty files first, so a walk that stopped at its entry cap would never reach the bytes below
HIDE_IN_SCRATCH = HEADER + """
class ModelNew(nn.Module):
    def forward(self, a, b):
        for i in range(10_001):
            open(f"e{i}", "wb").close()
        os.makedirs("z", exist_ok=True)
        chunk = b"\\0" * (64 << 20)
        with open("z/fill.bin", "wb") as f:
            for _ in range(64):
                f.write(chunk)
        time.sleep(10 ** 6)
"""

GIANT_ERROR = """
import torch
import triton
from torch import nn


class ModelNew(nn.Module):
    def forward(self, a, b):
        raise RuntimeError("E" * (16 << 20))
"""


def _batch(source: str, **config) -> tuple[list, float]:
    ev = Evaluator(ResultStore(":memory:"), EvalConfig(seed=0, static_checks=False, timeout_s=TIMEOUT_S, **config))
    start = time.monotonic()
    verdicts = evaluate_many(ev, [(TASK, source), (TASK, HONEST)], device="cpu", workers=2)
    return verdicts, time.monotonic() - start


@pytest.mark.parametrize(("source", "failure"), [(STALLED, "timeout"), (FLOOD, "bad_reply")],
                         ids=["stalled_message", "message_flood"])
def test_a_connection_that_stalls_or_floods_costs_only_its_own_verdict(source, failure):
    (bad, honest), wall = _batch(source)
    assert bad.stage is Stage.RUNTIME_ERROR and bad.error.startswith(failure) and bad.reward < 0, bad.error
    assert honest.stage is Stage.CORRECT
    assert wall < 3 * TIMEOUT_S


def test_a_scratch_folder_filled_past_the_memory_limit_is_a_memory_failure():
    (bad, honest), _ = _batch(FILL_SCRATCH, memory_limit_gb=1.0)
    assert bad.stage is Stage.RUNTIME_ERROR and bad.error.startswith("memory"), bad.error
    assert "scratch folder" in bad.error and honest.stage is Stage.CORRECT


def test_a_scratch_folder_too_large_to_walk_is_a_memory_failure():
    (bad, honest), _ = _batch(HIDE_IN_SCRATCH, memory_limit_gb=1.0)
    assert bad.stage is Stage.RUNTIME_ERROR and bad.error.startswith("memory"), bad.error
    assert "more than 10000 entries" in bad.error and honest.stage is Stage.CORRECT


def test_folder_bytes_counts_what_it_can_and_refuses_what_it_cannot(tmp_path):
    from hawkeye_env.judge.parent.launch.host_memory import UNCOUNTED, folder_bytes

    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.bin").write_bytes(b"1" * 8192)
    assert 8192 <= folder_bytes(str(tmp_path)) < UNCOUNTED
    for i in range(20):
        (tmp_path / f"e{i}").touch()
    assert folder_bytes(str(tmp_path), most_entries=10) == UNCOUNTED


def test_an_error_of_many_megabytes_is_bounded_in_the_verdict():
    ev = Evaluator(ResultStore(":memory:"), EvalConfig(seed=0, timeout_s=60))
    v = ev.evaluate(TASK, GIANT_ERROR, "cpu")
    assert v.stage is Stage.RUNTIME_ERROR and "characters omitted" in v.error
    assert len(v.error) < MAX_TEXT_CHARS + 4000 and len(v.feedback) < 4 * MAX_TEXT_CHARS
