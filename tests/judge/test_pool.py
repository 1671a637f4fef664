"""The local pool: the same verdicts as one-by-one calls on a mixed batch, and no lost result when
a worker is killed from outside mid-batch.

Static checks are off here so the crashing, hanging and torch-fallback candidates reach the worker
and are caught by its own defences (the static rules have their own tests).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

from hawkeye_env.judge.parent.batch.pool import failed_without_verdict
from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator, evaluate_many
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.shared.verdict import Stage
from hawkeye_env.tasks.registry import get_task, solution_source

HACKS = Path(__file__).parent.parent / "candidates" / "hacks"
ADD = "vector_add_fp32"
GOOD = solution_source(get_task(ADD))
WRONG = GOOD.replace("tl.load(b_ptr", "-tl.load(b_ptr")

# (task, source, expected stage, expected violation codes): hanging, good, wrong, hacking, crashing.
# The hanging candidate comes first, so its timeout runs while the other worker judges the rest.
MIXED = [
    (ADD, (HACKS / "h17_infinite_loop.py").read_text(), Stage.RUNTIME_ERROR, []),
    (ADD, GOOD, Stage.CORRECT, []),
    ("softmax_fp32", solution_source(get_task("softmax_fp32")), Stage.CORRECT, []),
    (ADD, WRONG, Stage.INCORRECT, []),
    ("gemm_bf16", (HACKS / "h08_torch_matmul.py").read_text(), Stage.REJECTED, ["torch_compute_op"]),
    (ADD, (HACKS / "h17_ctypes_segfault.py").read_text(), Stage.RUNTIME_ERROR, []),
]
HANGS, CRASHES = 0, 5  # the indices of the hanging and the crashing candidate in MIXED
# The CPU verdicts above take 1-2 s each on the 2-core CI machine, alone; with two Ray actors, their
# workers and the standbys they start all importing at once on those 2 cores, a first verdict once
# took over 8 s (CI, 2026-11-30). The limit only bounds how long the hanging candidate costs.
HANG_TIMEOUT_S = 20.0


def _summary(v) -> tuple:
    """Stage, violation codes and, for a dead worker, the failure kind (crash, timeout...)."""
    failure = v.error.split(":", 1)[0] if v.stage is Stage.RUNTIME_ERROR else ""
    return v.stage, sorted(x.code for x in v.violations), failure


def test_pool_matches_single_evaluator_on_a_mixed_batch():
    config = EvalConfig(seed=0, static_checks=False, timeout_s=HANG_TIMEOUT_S)
    jobs = [(task, source) for task, source, _, _ in MIXED]
    # every job but the hanging one judged alone too (the hang costs its whole timeout in both)
    single = {i: Evaluator(ResultStore(":memory:"), config).evaluate(t, s, "cpu")
              for i, (t, s) in enumerate(jobs) if i != HANGS}
    pooled_ev = Evaluator(ResultStore(":memory:"), config)
    pooled = evaluate_many(pooled_ev, jobs, device="cpu", workers=2)
    for i, a in single.items():
        task, _, stage, codes = MIXED[i]
        assert a.stage is stage and sorted(x.code for x in a.violations) == codes, (task, a.feedback)
        assert _summary(a) == _summary(pooled[i]), (task, a.feedback, pooled[i].feedback)
    assert "SIGSEGV" in pooled[CRASHES].error and "timeout" in pooled[HANGS].error
    assert _summary(pooled[HANGS]) == (Stage.RUNTIME_ERROR, [], "timeout")
    assert pooled_ev.store.count() == len(jobs)


def _killed_once(marker: Path) -> str:
    """The honest kernel, but its first worker records its pid and spins until killed from outside."""
    return GOOD + (
        "\n\nimport os as _os\n"
        f"if not _os.path.exists({str(marker)!r}):\n"
        f"    with open({str(marker) + '.tmp'!r}, 'w') as _f:\n"
        "        _f.write(str(_os.getpid()))\n"
        f"    _os.replace({str(marker) + '.tmp'!r}, {str(marker)!r})\n"
        "    while True:\n"
        "        pass\n"
    )


def _always_killed(attempts: Path) -> str:
    """Every worker of this candidate is SIGKILLed (as the OOM killer would), after counting itself."""
    return GOOD + (
        "\n\nimport os as _os\n"
        f"with open({str(attempts)!r}, 'a') as _f:\n"
        "    _f.write('x')\n"
        "_os.kill(_os.getpid(), 9)\n"
    )


def _kill_when_marked(marker: Path, killed: list[int], stop: threading.Event) -> None:
    while not stop.is_set():
        if marker.exists():
            pid = int(marker.read_text())
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
            return
        time.sleep(0.02)


def test_worker_killed_mid_batch_loses_no_result(tmp_path, monkeypatch):
    # The candidates report their pid through files outside their scratch folder, which the OS
    # sandbox forbids (tests/judge/test_isolation.py); this test is about the pool's retries.
    monkeypatch.setenv("HAWKEYE_SANDBOX", "off")
    marker, attempts = tmp_path / "pid", tmp_path / "attempts"
    ev = Evaluator(ResultStore(tmp_path / "store.sqlite3"), EvalConfig(seed=0, static_checks=False, timeout_s=60))
    jobs = [(ADD, GOOD), (ADD, _killed_once(marker)), (ADD, WRONG), (ADD, _always_killed(attempts)),
            ("softmax_fp32", solution_source(get_task("softmax_fp32")))]
    killed: list[int] = []
    stop = threading.Event()
    killer = threading.Thread(target=_kill_when_marked, args=(marker, killed, stop))
    killer.start()
    try:
        verdicts = evaluate_many(ev, jobs, device="cpu", workers=2)
    finally:
        stop.set()
        killer.join(10)
    assert len(killed) == 1, "the spinning worker was never seen"
    assert [v.stage for v in verdicts] == [Stage.CORRECT, Stage.CORRECT, Stage.INCORRECT, Stage.RUNTIME_ERROR,
                                           Stage.CORRECT], [v.feedback for v in verdicts]
    assert verdicts[3].error == "crash: worker was killed by SIGKILL"
    assert attempts.read_text() == "xx"  # retried once in a fresh worker, then failed with the reason
    assert all(not failed_without_verdict(v) for i, v in enumerate(verdicts) if i != 3)
    stored = ResultStore(tmp_path / "store.sqlite3")
    assert stored.count() == len(jobs)  # the retried verdicts replaced the crash verdicts
