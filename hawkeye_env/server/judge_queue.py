"""One judge shared by many concurrent episodes: single candidates in, fair ``evaluate_many`` batches out.

Each served session (``hawkeye_env/server/environment.py``), each rollout of TRL's async GRPO
trainer (``training/tool_env.py``) and each adapter call asks for one verdict at a time, from its
own thread. ``JudgeQueue.submit(task, source, client)`` queues the candidate and returns a
``Future`` of its ``Verdict``; ``judge`` blocks for it. The queue judges at most ``workers``
candidates at once (``evaluate_many``'s own default: 2 on CPU, 4 per GPU). Whenever some of that
capacity is free, a dispatcher thread waits ``window_s`` for more arrivals, then takes as many
waiting candidates as fit, one per client in turn (``FairQueue``: round-robin between clients, so
a client with many candidates waiting cannot starve one with a single candidate), and judges them
in one ``evaluate_many`` call on one GPU lane (duplicates judged once, correctness trials
overlapping, timed sections never sharing a GPU). Each verdict is handed over as it arrives, and
its capacity goes back then, so a slow candidate holds one slot, never a batch.

Bounds for untrusted callers (the served env): a named client holds at most ``max_per_client``
candidates waiting or being judged (``QueueFull`` beyond), and is judged on at most half the
slots (at least one), so a client whose candidates are slow, or given up while being judged,
leaves the other half to everyone else; ``None`` (the process's own callers) has no bound. A
waiter that gives up calls ``give_up(future)``: a candidate still waiting is withdrawn and never
judged; one already being judged runs to its verdict, which the evaluator stores as usual, and
keeps its client's count until then, but lends its slot to the others meanwhile (for at most
``workers`` such candidates at once: the judge then runs up to twice its workers). Example::

    queue = JudgeQueue(Evaluator(ResultStore(":memory:")), device="cpu")
    verdict = queue.judge("vector_add_fp32", source)            # from any thread
    future = queue.submit("vector_add_fp32", source, client="session-1")
    queue.give_up(future)                                        # withdrawn if still waiting
    queue.status()                                               # counts for the server's /judge
    queue.close()
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from hawkeye_env.judge.parent.batch.pool import CPU_WORKERS, WORKERS_PER_GPU
from hawkeye_env.judge.parent.evaluator import Evaluator, evaluate_many, resolve_device
from hawkeye_env.judge.shared.verdict import Verdict
from hawkeye_env.server.fair_queue import FairQueue, QueueFull
from hawkeye_env.server.limits import DEFAULT_MAX_PER_CLIENT

log = logging.getLogger(__name__)

#: Seconds the dispatcher waits for more candidates after the first of a batch. 20 ms is well under
#: one CPU-interpreter verdict (about 2 s for ``vector_add_fp32``) and one GPU verdict (seconds),
#: so waiting costs nothing measurable while letting the sessions of one trainer step share a batch.
DEFAULT_WINDOW_S = 0.02


@dataclass(eq=False)
class Pending:
    """One candidate waiting or being judged, and the future its client waits on."""

    task_id: str
    source: str
    client: Hashable
    future: Future = field(default_factory=Future)
    lane: Hashable = None  # where it is judged, once it is
    lent: bool = False  # given up while judged: its slot lent to the others until its verdict


def lane_capacities(device: str, workers: int | None, gpus: int | list[int] | None) -> dict:
    """Candidates judged at once per lane: ``{None: n}`` on CPU (or CUDA with no visible GPU: a
    remote backend's), else ``{gpu index: n}`` with ``workers`` (default 4 per GPU) spread evenly."""
    if device == "cuda":
        import torch

        count = torch.cuda.device_count()
        indices = list(range(gpus)) if isinstance(gpus, int) else list(gpus) if gpus is not None else list(range(count))
        if indices:
            total = max(workers or WORKERS_PER_GPU * len(indices), len(indices))
            return {g: total // len(indices) + (i < total % len(indices)) for i, g in enumerate(indices)}
        return {None: workers or WORKERS_PER_GPU}
    return {None: workers or CPU_WORKERS}


class JudgeQueue:
    """Shares ``evaluator`` fairly between threads and clients; see the module docstring.

    Args:
        evaluator: the one ``Evaluator`` (or a backend with ``evaluate_many``) every verdict comes from.
        device: ``auto``, ``cpu`` or ``cuda``, resolved once.
        workers: candidates judged at once in all (default 2 on CPU, 4 per GPU).
        gpus: GPUs to judge on (how many, or which indices; default all visible).
        window_s: how long a batch waits for more candidates after its first.
        max_per_client: candidates a named client may hold at once (None: no bound).
    """

    def __init__(self, evaluator: Evaluator, device: str = "auto", workers: int | None = None,
                 gpus: int | list[int] | None = None, window_s: float = DEFAULT_WINDOW_S,
                 max_per_client: int | None = DEFAULT_MAX_PER_CLIENT):
        if window_s < 0 or (workers is not None and workers < 1):
            raise ValueError("need window_s >= 0 and workers >= 1")
        self.evaluator, self.device = evaluator, resolve_device(device)
        self.workers, self.gpus, self.window_s = workers, gpus, window_s
        self._free = lane_capacities(self.device, workers, gpus)
        self.capacity = sum(self._free.values())
        self._waiting = FairQueue(max_per_client, max_running=max(1, self.capacity // 2))
        self._cond = threading.Condition()
        self._closed = False
        # a batch per slot at most, and as many again for the slots lent by candidates given up
        self._pool = ThreadPoolExecutor(max_workers=2 * self.capacity, thread_name_prefix="hawkeye-judge")
        self._judging: dict[Future, Pending] = {}
        self._lent = 0
        self._counts = {"submitted": 0, "judged": 0, "cached": 0, "cancelled": 0, "refused": 0, "given_up": 0,
                        "batches": 0, "in_flight": 0, "most_in_flight": 0, "failed_batches": 0, "largest_batch": 0}
        self._started = time.time()
        self._dispatcher = threading.Thread(target=self._dispatch, name="hawkeye-judge-queue", daemon=True)
        self._dispatcher.start()

    def submit(self, task_id: str, source: str, client: Hashable = None) -> Future:
        """Queue one candidate for ``client``; the ``Future`` resolves to its ``Verdict`` (cancel it to
        withdraw the candidate while it waits). ``QueueFull`` when ``client`` is at its bound."""
        job = Pending(task_id, source, client)
        with self._cond:
            if self._closed:
                raise RuntimeError("the judge queue is closed")
            try:
                self._waiting.push(client, job)
            except QueueFull:
                self._counts["refused"] += 1
                raise
            self._counts["submitted"] += 1
            self._cond.notify_all()
        job.future.add_done_callback(lambda f: f.cancelled() and self._withdraw(job))
        return job.future

    def admit(self, client: Hashable) -> None:
        """Raise ``QueueFull`` (counted as refused) when ``client`` may not submit another candidate now."""
        with self._cond:
            try:
                self._waiting.check(client)
            except QueueFull:
                self._counts["refused"] += 1
                raise

    def judge(self, task_id: str, source: str, timeout: float | None = None, client: Hashable = None) -> Verdict:
        """The verdict of one candidate; on ``TimeoutError`` the candidate is given up (``give_up``)."""
        future = self.submit(task_id, source, client)
        try:
            return future.result(timeout)
        except TimeoutError:
            self.give_up(future)
            raise

    def give_up(self, future: Future) -> bool:
        """Stop waiting for ``future``'s candidate. True: it was still waiting and is withdrawn, never
        judged. False: it is being judged and runs to its verdict (stored as usual; the judge cannot
        stop a worker), and its slot is lent to the other candidates until then, for at most
        ``workers`` such candidates at once, so clients that hang up mid-verdict cannot fill the judge."""
        if future.cancel():
            return True
        with self._cond:
            job = self._judging.get(future)
            if job is not None and not job.lent and self._lent < self.capacity:
                job.lent = True
                self._lent += 1
                self._free[job.lane] += 1
                self._counts["given_up"] += 1
                self._cond.notify_all()
        return False

    def judge_many(self, jobs: list[tuple[str, str]]) -> list[Verdict]:
        """Verdicts of ``(task_id, source)`` pairs, in order (they join the queue's batches)."""
        futures = [self.submit(task, source) for task, source in jobs]
        return [f.result() for f in futures]

    def status(self) -> dict:
        """What the judge is doing: device, store, config key and counts since start (JSON-ready)."""
        with self._cond:
            counts = dict(self._counts, queued=len(self._waiting), clients=self._waiting.clients())
        store = getattr(self.evaluator, "store", None)
        config = getattr(self.evaluator, "config", None)
        return {"device": self.device, "workers": self.capacity, "gpus": self.gpus, "window_s": self.window_s,
                "max_per_client": self._waiting.max_per_client, "store": getattr(store, "path", None),
                "config": config.key() if config is not None else None, "uptime_s": time.time() - self._started,
                "closed": self._closed, **counts}

    def close(self) -> None:
        """Stop taking candidates; waiting ones are still judged, running batches finish."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._dispatcher.join()
        self._pool.shutdown(wait=True)

    def _withdraw(self, job: Pending) -> None:
        with self._cond:
            if self._waiting.remove(job.client, job):
                self._counts["cancelled"] += 1

    def _dispatch(self) -> None:
        while True:
            with self._cond:
                lane, batch = self._next_batch()
                if lane is _STOP:
                    return
            if batch:
                self._pool.submit(self._judge_batch, lane, batch)

    def _next_batch(self):
        """``(lane, jobs)`` to judge next, once capacity and candidates meet (called under the lock)."""
        while not (self._waiting.ready() and max(self._free.values()) > 0):
            if self._closed and not self._waiting:
                return _STOP, []
            self._cond.wait()
        lane = max(self._free, key=self._free.__getitem__)
        deadline = time.monotonic() + self.window_s
        while self._waiting.ready() < self._free[lane] and not self._closed:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            self._cond.wait(left)
        batch = []
        for client, job in self._waiting.pop(self._free[lane]):
            if job.future.set_running_or_notify_cancel():
                job.lane = lane
                self._judging[job.future] = job
                batch.append(job)
            else:  # cancelled between its turn and now
                self._waiting.release(client)
                self._counts["cancelled"] += 1
        self._free[lane] -= len(batch)
        c = self._counts
        c["in_flight"] += len(batch)
        c["most_in_flight"] = max(c["most_in_flight"], c["in_flight"])
        c["batches"] += bool(batch)
        c["largest_batch"] = max(c["largest_batch"], len(batch))
        return lane, batch

    def _judge_batch(self, lane, batch: list[Pending]) -> None:
        delivered = [False] * len(batch)

        def deliver(i: int, verdict: Verdict | None, exc: BaseException | None = None) -> None:
            with self._cond:
                if delivered[i]:
                    return
                delivered[i] = True
                if batch[i].lent:
                    self._lent -= 1
                else:
                    self._free[lane] += 1
                del self._judging[batch[i].future]
                self._waiting.release(batch[i].client)
                self._counts["in_flight"] -= 1
                if exc is None:
                    self._counts["judged"] += 1
                    self._counts["cached"] += bool(verdict.cached)
                self._cond.notify_all()
            if exc is None:
                batch[i].future.set_result(verdict)
            else:
                batch[i].future.set_exception(exc)

        try:
            verdicts = evaluate_many(self.evaluator, [(j.task_id, j.source) for j in batch], self.device, len(batch),
                                     on_verdict=deliver, gpus=None if lane is None else [lane])
        except Exception as exc:  # noqa: BLE001 - every waiting client gets the error, the queue lives on
            log.exception("judge batch of %d failed", len(batch))
            with self._cond:
                self._counts["failed_batches"] += 1
            for i in range(len(batch)):
                deliver(i, None, exc)
            return
        for i, verdict in enumerate(verdicts):
            deliver(i, verdict)


_STOP = object()

__all__ = ["DEFAULT_WINDOW_S", "JudgeQueue", "Pending", "QueueFull", "lane_capacities"]
