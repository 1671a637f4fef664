"""A process forked after its parent judged something can still judge (gymnasium's AsyncVectorEnv
with the default ``fork`` context does exactly this)."""

from __future__ import annotations

import multiprocessing as mp

from hawkeye_env.judge.evaluator import EvalConfig, Evaluator
from hawkeye_env.judge.store import ResultStore
from hawkeye_env.judge.verdict import Stage
from hawkeye_env.tasks.registry import get_task, solution_source

SOURCE = solution_source(get_task("vector_add_fp32"))


def _judge_in_child(queue) -> None:
    v = Evaluator(ResultStore(":memory:"), EvalConfig(seed=1)).evaluate("vector_add_fp32", SOURCE, "cpu")
    queue.put((v.stage.value, v.error))


def test_forked_child_judges_after_parent_started_the_forkserver():
    parent = Evaluator(ResultStore(":memory:"), EvalConfig(seed=0)).evaluate("vector_add_fp32", SOURCE, "cpu")
    assert parent.stage is Stage.CORRECT
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_judge_in_child, args=(queue,))
    child.start()
    stage, error = queue.get(timeout=120)
    child.join(30)
    assert stage == "correct", error


CHILD_REPORT = """
import multiprocessing as mp, sys
from hawkeye_env.judge import sandbox

def report(queue):
    import threading
    queue.put(([m for m in sandbox.PRELOAD_CUDA if m not in sys.modules], threading.active_count()))

if __name__ == "__main__":
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(sandbox.PRELOAD_CUDA)
    queue = ctx.Queue()
    p = ctx.Process(target=report, args=(queue,))
    p.start()
    print(queue.get(timeout=120))
    p.join(30)
"""


def test_the_cuda_forkserver_preload_imports_cleanly(tmp_path):
    """Every module of the CUDA server's preload list imports in a forkserver (multiprocessing
    drops a failing preload silently, which would put the import back into each worker's time) and
    leaves its children single-threaded, as forking requires."""
    import subprocess
    import sys

    script = tmp_path / "preload.py"
    script.write_text(CHILD_REPORT)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "([], 1)", out.stdout + out.stderr[-2000:]
