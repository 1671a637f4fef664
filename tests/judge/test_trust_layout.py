"""The trust boundary is visible in the layout (``hawkeye_env/judge/__init__.py``): the trusted
parent never imports a module of the sandboxed worker or of the replay, the worker imports none of
the parent's, and the trusted replay imports none of the candidate worker's (it never imports
candidate code, nor the code that does) and none of the parent's.

Each side is imported in a fresh interpreter, as its process imports it, and the other side's
modules must be absent from ``sys.modules``.
"""

from __future__ import annotations

import json
import subprocess
import sys

CANDIDATE_SIDE = ("worker", "guards", "poison", "plan_recorder", "interpreter_recorder")
# every started process, trusted code (the interpreter's fixes run in the worker and the CPU replay)
PROCESS_SIDE = ("worker_entry", "worker_process", "timing", "back_to_back", "warmup", "zygote", "ns_enter",
                "cpu_backend", "interpreter_calls", "interpreter_bounds", "interpreter_fixes", "interpreter_gaps",
                "interpreter_libdevice", "not_checkable")
REPLAY_SIDE = ("replay", "replay_kernels", "source_rebuild")
WORKER_SIDE = CANDIDATE_SIDE + PROCESS_SIDE + REPLAY_SIDE
PARENT_SIDE = ("evaluator", "pool", "lanes", "sandbox", "worker_start", "standby", "isolation", "spawn", "forkserver",
               "scratch",
               "host_memory", "output_capture", "reply_decode", "pickle_depth", "reply_check", "references", "checks",
               "correctness", "static_checks", "static_checker", "static_syntax", "static_classes", "static_kernels",
               "static_modules",
               "static_allowlist",
               "static_foreign", "static_scopes", "store", "roofline", "feedback", "backends", "versions", "plan",
               "replayed", "plan_check", "comparing", "kernelbench_protocol", "eval_config", "finish", "stale",
               "structure", "stall", "hidden_shapes")


def _imported_after(modules: list[str]) -> set[str]:
    code = (
        "import json, sys\n"
        f"for m in {modules!r}:\n    __import__(m)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('hawkeye_env.judge.'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    return {m.removeprefix("hawkeye_env.judge.") for m in json.loads(out.stdout.strip().splitlines()[-1])}


def test_the_parent_imports_no_worker_module():
    parent = [f"hawkeye_env.judge.{m}" for m in PARENT_SIDE] + ["hawkeye_env.env", "hawkeye_env.vector",
                                                                "training.reward", "evals.best_of_n"]
    loaded = _imported_after(parent)
    assert not loaded & set(WORKER_SIDE), sorted(loaded & set(WORKER_SIDE))


def test_the_worker_imports_no_parent_module():
    loaded = _imported_after(["hawkeye_env.judge.worker_entry", "hawkeye_env.judge.zygote", "hawkeye_env.judge.worker",
                              "hawkeye_env.judge.warmup"])
    assert not loaded & set(PARENT_SIDE + REPLAY_SIDE), sorted(loaded & set(PARENT_SIDE + REPLAY_SIDE))


def test_the_replay_imports_neither_the_candidate_worker_nor_the_parent():
    loaded = _imported_after(["hawkeye_env.judge.worker_entry", "hawkeye_env.judge.zygote", "hawkeye_env.judge.replay",
                              "hawkeye_env.judge.warmup", "hawkeye_env.judge.timing"])
    assert "replay" in loaded
    bad = loaded & set(CANDIDATE_SIDE + PARENT_SIDE)
    assert not bad, sorted(bad)
