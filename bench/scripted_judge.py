"""A judge whose verdicts and latencies the candidate scripts, for load tests of the served env.

The served env's scheduling (the queue's capacity, round-robin, withdrawals, limits) is what a
load test measures, not the judge: ``ScriptedJudge`` stands in for the ``Evaluator`` behind the
``JudgeQueue``. A candidate's first line says what it gets::

    # scripted: seconds=0.2 stage=correct tag=w3-1

``ScriptedJudge.evaluate_many`` has the batch API's call and contract: at most ``workers``
candidates at once, duplicates judged once, each verdict handed to ``on_verdict`` as it arrives
and written to a real ``ResultStore`` (so a test can read back what was stored), answers from
the store when ``use_cache``. A candidate without the line is judged ``no_source`` at once.

Serve the env on it (the load test starts this in a subprocess)::

    python -m bench.scripted_judge --port 8000 --store /tmp/v.sqlite3 --max-sessions 16
"""

from __future__ import annotations

import argparse
import re
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

from hawkeye_env.judge.parent.eval_config import EvalConfig
from hawkeye_env.judge.parent.store import ResultStore, source_hash
from hawkeye_env.judge.shared.verdict import Stage, Verdict
from reward.score import REWARD_CORRECT, REWARD_FAILURE

SCRIPT_RE = re.compile(r"^# scripted: seconds=(?P<seconds>[\d.]+) stage=(?P<stage>\w+) tag=(?P<tag>\S+)$", re.M)
VERSIONS = {"judge": "scripted"}
#: The reward a scripted stage pays: the reward's own values for an untimed verdict of that stage.
REWARDS = {"correct": REWARD_CORRECT, "incorrect": REWARD_FAILURE, "compile_error": REWARD_FAILURE}
TASK = "vector_add_fp32"


def scripted_reply(seconds: float, stage: str, tag: str) -> str:
    """A fenced reply whose candidate ``ScriptedJudge`` judges ``stage`` after ``seconds``."""
    return f"```python\n# scripted: seconds={seconds:g} stage={stage} tag={tag}\nclass ModelNew:\n    pass\n```\n"


def scripted_verdict(task: str, device: str, source: str) -> tuple[Verdict, float]:
    """The verdict ``source``'s script asks for, and the seconds judging it takes."""
    m = SCRIPT_RE.search(source)
    h = source_hash(source)
    if m is None:
        return Verdict(task=task, device=device, stage=Stage.NO_SOURCE, source_hash=h, reward=-1.0,
                       error="no script line"), 0.0
    stage = m["stage"]
    verdict = Verdict(task=task, device=device, stage=Stage(stage), compiled=stage != "compile_error",
                      correct=stage == "correct", reward=REWARDS[stage], source_hash=h, versions=dict(VERSIONS),
                      feedback=f"scripted {stage} ({m['tag']})", error="" if stage == "correct" else "scripted")
    return verdict, float(m["seconds"])


class ScriptedJudge:
    """The batch API over scripted verdicts; see the module docstring.

    Args:
        store: where verdicts are written as they are reached.
    """

    def __init__(self, store: ResultStore):
        self.store, self.config = store, EvalConfig()

    def evaluate_many(self, jobs: list[tuple[str, str]], device: str = "cpu", workers: int | None = None,
                      use_cache: bool = True, on_verdict=None, gpus=None) -> list[Verdict]:
        unique: dict[tuple[str, str], list[int]] = {}
        for i, (task, source) in enumerate(jobs):
            unique.setdefault((task, source_hash(source)), []).append(i)
        results: list[Verdict | None] = [None] * len(jobs)
        with ThreadPoolExecutor(max_workers=max(1, workers or 2)) as pool:
            futures = {pool.submit(self._judge, task, jobs[idx[0]][1], device, use_cache): idx
                       for (task, _), idx in unique.items()}
            for future in as_completed(futures):
                for i in futures[future]:
                    results[i] = future.result()
                    if on_verdict is not None:
                        on_verdict(i, results[i])
        return results

    def _judge(self, task: str, source: str, device: str, use_cache: bool) -> Verdict:
        key = (task, source_hash(source), device, VERSIONS, {})
        hit = self.store.get_verdict(*key) if use_cache else None
        if hit is not None:
            verdict = Verdict.from_dict(hit)
            verdict.cached = True
            return verdict
        verdict, seconds = scripted_verdict(task, device, source)
        time.sleep(seconds)
        verdict.wall_s = seconds
        if verdict.stage is not Stage.NO_SOURCE:
            self.store.put_verdict(*key, verdict.to_dict())
        return verdict


def make_scripted_app(store: str, max_sessions: int, session_timeout_s: float | None, max_turns: int,
                      workers: int | None = None):
    """The served env on ``ScriptedJudge(ResultStore(store))``: CPU, ``TASK`` only, no unit context,
    episodes that end only at ``max_turns`` (a scripted verdict is never timed)."""
    from hawkeye_env.server.app import make_app

    return make_app(ScriptedJudge(ResultStore(store)), device="cpu", workers=workers, max_sessions=max_sessions,
                    session_timeout_s=session_timeout_s, tasks=[TASK], context="none", max_turns=max_turns,
                    target_speedup=1.0)


def main(argv: list[str] | None = None) -> None:
    from hawkeye_env.server.app import run

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--store", required=True)
    parser.add_argument("--max-sessions", type=int, default=16)
    parser.add_argument("--session-timeout", type=float, default=None)
    parser.add_argument("--max-turns", type=int, default=4)
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args(argv)
    run(make_scripted_app(args.store, args.max_sessions, args.session_timeout, args.max_turns, args.workers),
        "127.0.0.1", args.port)


if __name__ == "__main__":
    main()
