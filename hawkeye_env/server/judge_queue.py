"""One judge shared by many concurrent episodes: single candidates in, ``evaluate_many`` batches out.

Each served session (``hawkeye_env/server/environment.py``), each rollout of TRL's async GRPO
trainer (``training/tool_env.py``) and each adapter call asks for one verdict at a time, from its
own thread. ``JudgeQueue.judge(task, source)`` puts the candidate on a queue and blocks for its
verdict; a dispatcher thread gathers what arrives within ``window_s`` (at most ``max_batch``
candidates) and judges it with one ``evaluate_many`` call, so duplicates are judged once,
correctness trials overlap on the worker pool and timed sections never share a GPU (the lanes'
per-GPU lock, which holds across threads and processes). Up to ``max_batches`` batches run at once,
so a slow candidate never holds back the sessions that submit after it. Example::

    queue = JudgeQueue(Evaluator(ResultStore(":memory:")), device="cpu")
    verdict = queue.judge("vector_add_fp32", source)   # from any thread
    queue.status()                                     # counts for the server's /judge endpoint
    queue.close()
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor

from hawkeye_env.judge.parent.evaluator import Evaluator, evaluate_many, resolve_device
from hawkeye_env.judge.shared.verdict import Verdict

log = logging.getLogger(__name__)

#: Seconds the dispatcher waits for more candidates after the first of a batch. 20 ms is well under
#: one CPU-interpreter verdict (about 2 s for ``vector_add_fp32``) and one GPU verdict (seconds),
#: so waiting costs nothing measurable while letting the sessions of one trainer step share a batch.
DEFAULT_WINDOW_S = 0.02
#: Batches judged at once; each is bounded by ``workers`` candidates in flight.
DEFAULT_MAX_BATCHES = 4


class JudgeQueue:
    """Shares ``evaluator`` between threads by batching their candidates; see the module docstring.

    Args:
        evaluator: the one ``Evaluator`` (or a backend with ``evaluate_many``) every verdict comes from.
        device: ``auto``, ``cpu`` or ``cuda``, resolved once.
        workers: candidates in flight per batch (``evaluate_many``'s default when None).
        gpus: GPUs to judge on (``evaluate_many``'s ``gpus``; default all visible).
        window_s: how long a batch waits for more candidates after its first.
        max_batch: most candidates in one batch.
        max_batches: batches judged at once.
    """

    def __init__(self, evaluator: Evaluator, device: str = "auto", workers: int | None = None,
                 gpus: int | list[int] | None = None, window_s: float = DEFAULT_WINDOW_S, max_batch: int = 64,
                 max_batches: int = DEFAULT_MAX_BATCHES):
        if window_s < 0 or max_batch < 1 or max_batches < 1:
            raise ValueError("need window_s >= 0, max_batch >= 1 and max_batches >= 1")
        self.evaluator, self.device = evaluator, resolve_device(device)
        self.workers, self.gpus = workers, gpus
        self.window_s, self.max_batch = window_s, max_batch
        self._pending: list[tuple[str, str, Future]] = []
        self._cond = threading.Condition()
        self._closed = False
        self._pool = ThreadPoolExecutor(max_workers=max_batches, thread_name_prefix="hawkeye-judge")
        self._counts = {"submitted": 0, "judged": 0, "cached": 0, "batches": 0, "in_flight": 0, "failed_batches": 0,
                        "largest_batch": 0}
        self._started = time.time()
        self._dispatcher = threading.Thread(target=self._dispatch, name="hawkeye-judge-queue", daemon=True)
        self._dispatcher.start()

    def submit(self, task_id: str, source: str) -> Future:
        """Queue one candidate; the ``Future`` resolves to its ``Verdict``."""
        future: Future = Future()
        with self._cond:
            if self._closed:
                raise RuntimeError("the judge queue is closed")
            self._pending.append((task_id, source, future))
            self._counts["submitted"] += 1
            self._cond.notify()
        return future

    def judge(self, task_id: str, source: str, timeout: float | None = None) -> Verdict:
        """The verdict of one candidate, judged in a batch with whatever else is queued."""
        return self.submit(task_id, source).result(timeout)

    def judge_many(self, jobs: list[tuple[str, str]]) -> list[Verdict]:
        """Verdicts of ``(task_id, source)`` pairs, in order (they join the queue's batches)."""
        futures = [self.submit(task, source) for task, source in jobs]
        return [f.result() for f in futures]

    def status(self) -> dict:
        """What the judge is doing: device, store, config key and counts since start (JSON-ready)."""
        with self._cond:
            counts = dict(self._counts, queued=len(self._pending))
        store = getattr(self.evaluator, "store", None)
        config = getattr(self.evaluator, "config", None)
        return {"device": self.device, "workers": self.workers, "gpus": self.gpus, "window_s": self.window_s,
                "store": getattr(store, "path", None), "config": config.key() if config is not None else None,
                "uptime_s": time.time() - self._started, "closed": self._closed, **counts}

    def close(self) -> None:
        """Stop taking candidates; queued ones are still judged, running batches finish."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._dispatcher.join()
        self._pool.shutdown(wait=True)

    def _dispatch(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._closed:
                    self._cond.wait()
                if not self._pending:
                    return
                deadline = time.monotonic() + self.window_s
                while len(self._pending) < self.max_batch and not self._closed:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._cond.wait(left)
                batch, self._pending = self._pending[: self.max_batch], self._pending[self.max_batch:]
                self._counts["in_flight"] += len(batch)
                self._counts["batches"] += 1
                self._counts["largest_batch"] = max(self._counts["largest_batch"], len(batch))
            self._pool.submit(self._judge_batch, batch)

    def _judge_batch(self, batch: list[tuple[str, str, Future]]) -> None:
        try:
            verdicts = evaluate_many(self.evaluator, [(t, s) for t, s, _ in batch], self.device, self.workers,
                                     gpus=self.gpus)
        except Exception as exc:  # noqa: BLE001 - every waiting session gets the error, the queue lives on
            log.exception("judge batch of %d failed", len(batch))
            with self._cond:
                self._counts["in_flight"] -= len(batch)
                self._counts["failed_batches"] += 1
            for *_, future in batch:
                future.set_exception(exc)
            return
        with self._cond:
            self._counts["in_flight"] -= len(batch)
            self._counts["judged"] += len(batch)
            self._counts["cached"] += sum(v.cached for v in verdicts)
        for (*_, future), verdict in zip(batch, verdicts):
            future.set_result(verdict)


__all__ = ["DEFAULT_MAX_BATCHES", "DEFAULT_WINDOW_S", "JudgeQueue"]
