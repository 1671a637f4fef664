"""The batch API on Ray: one judge actor per GPU, placed across the cluster's nodes.

    pip install 'hawkeye-env[ray]'

    from hawkeye_env.judge.parent.evaluator import EvalConfig, evaluate_many
    from hawkeye_env.judge.parent.batch.ray_backend import RayEvaluator
    from hawkeye_env.judge.parent.store import ResultStore

    judge = RayEvaluator(ResultStore(), EvalConfig(), address="auto")   # address=None: a local Ray
    verdicts = evaluate_many(judge, [(task, source), ...], device="cuda")

Design:

* One actor per GPU (``num_gpus=1``; Ray pins its GPU with ``CUDA_VISIBLE_DEVICES``), or on CPU
  ``num_actors`` actors with ``num_cpus=1``. Each actor owns a local ``Evaluator`` with an in-memory
  store (its baselines are timed once per task and kept for the actor's life) and judges up to
  ``workers_per_actor`` candidates at once, each in a fresh worker process, through the same lanes
  as the local pool: correctness overlaps, timed sections never share the GPU (``lanes.py``; the
  lock files are per host and named by GPU UUID, so actors of one node never block each other).
* What runs where: each actor is the trusted parent of its node. The whole ``Evaluator`` runs in it
  (the static filter, the trial plan from its seed, the sandboxed workers on that node, the plan
  checks, the references and every decision, the reward); the driver only dedupes, answers from
  the store, dispatches, retries and stores. It takes the actors' verdicts as they are: every node
  of the cluster is part of the judge.
* ``max_restarts=1``, ``max_task_retries=0``: Ray restarts a dead actor once and never re-runs a
  candidate by itself. An actor that died under a candidate is pinged at once (whichever actor
  the candidate's retry goes to), and one that answers no ping then or before a retry is given up
  on: later batches send it nothing unless it answers within ``RECHECK_S`` at their start
  (restarted on a new node). The driver retries a candidate once when its actor died or raised, or its
  worker died without a verdict (``pool.failed_without_verdict``). A worker's second failure is
  the candidate's verdict, with the reason; an actor's second death or exception, or no live
  actor to send it to, is a ``judge_error`` (the judge failed, not the candidate), never stored,
  so the candidate is judged again next time.
* The driver writes every verdict but a ``judge_error``, and the baseline times it carries, to the
  caller's store (the one store) as it arrives, and answers repeated candidates from it without
  dispatching them. Actors are assumed alike (one GPU model): the store key uses the first actor's
  versions.
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable

from hawkeye_env.judge.parent.batch.pool import CPU_WORKERS, WORKERS_PER_GPU, dedupe, failed_without_verdict
from hawkeye_env.judge.parent.decide.finish import finish_verdict
from hawkeye_env.judge.parent.evaluator import JUDGE_ERROR, EvalConfig, Evaluator, software_versions
from hawkeye_env.judge.parent.lanes import make_lanes
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.shared.verdict import Failure, Stage, Verdict
from hawkeye_env.tasks.registry import get_task

INSTALL_HINT = "the Ray backend needs ray: pip install 'hawkeye-env[ray]'"
# A restarting actor imports torch and builds its Evaluator before it answers; 120 s covers a cold
# start on a loaded node with room to spare.
PING_TIMEOUT_S = 120.0
PING_RETRY_S = 0.5  # between pings of a restarting actor
# How long a later batch asks an actor given up on (it answered no ping) before leaving it out: an
# idle live actor answers at once, and one still restarting is asked again at the next batch. Each
# batch waiting PING_TIMEOUT_S on it instead would stall every batch after a node is lost for good.
RECHECK_S = 1.0
ACTOR_DIED = "judge actor died"


def import_ray():
    """``ray``, or ImportError with the install hint."""
    try:
        import ray
    except ImportError as exc:
        raise ImportError(INSTALL_HINT) from exc
    return ray


def _first_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:200]}"


class JudgeActor:
    """What runs inside one Ray actor: a local ``Evaluator`` on the actor's GPU (or CPU)."""

    def __init__(self, config: EvalConfig, device: str):
        self.device = device
        self.evaluator = Evaluator(ResultStore(":memory:"), config)
        self.lane = make_lanes(device)[0]

    def versions(self, task: str) -> dict[str, str]:
        return software_versions(self.device, get_task(task))

    def evaluate(self, task: str, source: str) -> dict:
        v = self.evaluator.evaluate(task, source, self.device, use_cache=False, lane=self.lane)
        return v.to_dict()

    def pid(self) -> int:
        return os.getpid()


class RayEvaluator:
    """Judges batches on Ray actors; ``evaluate_many`` has the local batch API's signature.

    Args:
        store: the one store every verdict is written to (default: the user cache store).
        config: judge configuration, shipped to every actor.
        address: Ray cluster address (``auto``, ``ray://host:10001``); None starts a local Ray.
        num_actors: actors to start; default one per cluster GPU on CUDA, ``CPU_WORKERS`` on CPU.
        workers_per_actor: candidates in flight per actor; default ``WORKERS_PER_GPU`` on CUDA, 1
            on CPU.
        init_kwargs: extra ``ray.init`` arguments when this object starts Ray.
    """

    def __init__(self, store: ResultStore | None = None, config: EvalConfig | None = None,
                 address: str | None = None, num_actors: int | None = None,
                 workers_per_actor: int | None = None, init_kwargs: dict | None = None):
        self.ray = import_ray()
        if not self.ray.is_initialized():
            self.ray.init(address=address, include_dashboard=False, **(init_kwargs or {}))
        self.store = store if store is not None else ResultStore()
        self.config = config or EvalConfig()
        self.num_actors = num_actors
        self.workers_per_actor = workers_per_actor
        self.actors: dict[str, list] = {}
        self._versions: dict[tuple[str, str], dict] = {}
        self._given_up: dict[str, set[int]] = {}  # device -> indices of actors that answered no ping

    # -- actors -------------------------------------------------------------------------------

    def resolve_device(self, device: str) -> str:
        if device == "auto":
            return "cuda" if self.ray.cluster_resources().get("GPU", 0) >= 1 else "cpu"
        if device not in ("cpu", "cuda"):
            raise ValueError(f"device must be cpu, cuda or auto, not {device!r}")
        return device

    def concurrency(self, device: str) -> int:
        return self.workers_per_actor or (WORKERS_PER_GPU if device == "cuda" else 1)

    def actors_for(self, device: str) -> list:
        """The actors judging on ``device``, started on first use."""
        if device not in self.actors:
            if device == "cuda":
                count = self.num_actors or int(self.ray.cluster_resources().get("GPU", 0))
                if count < 1:
                    raise ValueError("device cuda requested but the Ray cluster has no GPU")
                resources = {"num_gpus": 1}
            else:
                count, resources = self.num_actors or CPU_WORKERS, {"num_cpus": 1}
            cls = self.ray.remote(max_restarts=1, max_task_retries=0, max_concurrency=self.concurrency(device),
                                  **resources)(JudgeActor)
            self.actors[device] = [cls.remote(self.config, device) for _ in range(count)]
        return self.actors[device]

    def versions(self, task: str, device: str) -> dict:
        if (task, device) not in self._versions:
            self._versions[task, device] = self.ray.get(self.actors_for(device)[0].versions.remote(task))
        return self._versions[task, device]

    # -- judging ------------------------------------------------------------------------------

    def evaluate(self, task_id: str, source: str, device: str = "auto", use_cache: bool = True) -> Verdict:
        """Judge one candidate on an actor (the synchronous call a reward worker makes)."""
        return self.evaluate_many([(task_id, source)], device, use_cache=use_cache)[0]

    def evaluate_many(
        self, jobs: list[tuple[str, str]], device: str = "auto", workers: int | None = None,
        use_cache: bool = True, on_verdict: Callable[[int, Verdict], None] | None = None,
        gpus: int | list[int] | None = None,
    ) -> list[Verdict]:
        """Judge ``(task, source)`` pairs on the actors; results in input order. ``workers`` caps the
        candidates in flight over all actors (default: every actor's concurrency); ``gpus`` is the
        local pool's option and is ignored here (actors are the GPUs)."""
        device = self.resolve_device(device)
        actors = self.actors_for(device)
        unique = dedupe(jobs)
        results: list[Verdict | None] = [None] * len(jobs)

        def finish(key, verdict: Verdict) -> None:
            for i in unique[key]:
                results[i] = verdict
                if on_verdict is not None:
                    on_verdict(i, verdict)

        queue: deque = deque()
        for key in unique:
            hit = self._cached(key, device) if use_cache else None
            if hit is not None:
                finish(key, hit)
            else:
                queue.append((key, 0))
        limit = workers or len(actors) * self.concurrency(device)
        load = [0] * len(actors)
        given_up = self._still_given_up(device, actors)
        in_flight: dict = {}
        while queue or in_flight:
            while queue and len(in_flight) < limit:
                key, attempt = queue.popleft()
                a = self._pick(actors, load, given_up, check=attempt > 0)
                if a is None:
                    verdict = self._failure(key, device, "no judge actor is alive")
                    self._store(key, device, verdict)
                    finish(key, verdict)
                    continue
                load[a] += 1
                ref = actors[a].evaluate.remote(key[0], jobs[unique[key][0]][1])
                in_flight[ref] = (key, attempt, a)
            if not in_flight:
                break
            (ref,), _ = self.ray.wait(list(in_flight), num_returns=1)
            key, attempt, a = in_flight.pop(ref)
            load[a] -= 1
            verdict, reason = self._collect(ref)
            if reason.startswith(ACTOR_DIED) and a not in given_up and not self._answers(actors[a]):
                given_up.add(a)
            if verdict is None or failed_without_verdict(verdict):
                if attempt == 0:
                    queue.append((key, 1))
                    continue
                verdict = verdict or self._failure(key, device, reason)
            self._store(key, device, verdict)
            finish(key, verdict)
        return results

    def _pick(self, actors: list, load: list[int], given_up: set[int], check: bool) -> int | None:
        """The least loaded actor not given up on. For a retry (``check``) the actor must first
        answer a ping: an actor killed a moment ago may not be known dead yet, and a retry sent to
        it would fail for the same reason as the first attempt; one that does not answer is given
        up on. None when every actor is given up on."""
        while len(given_up) < len(actors):
            a = min((i for i in range(len(actors)) if i not in given_up), key=load.__getitem__)
            if not check or self._answers(actors[a]):
                return a
            given_up.add(a)
        return None

    def _still_given_up(self, device: str, actors: list) -> set[int]:
        """The actors on ``device`` given up on in earlier batches that still answer no ping within
        ``RECHECK_S`` (one that answers, restarted on a new node, judges again); the set this batch
        adds to."""
        given_up = self._given_up.setdefault(device, set())
        errors = self.ray.exceptions
        for a in sorted(given_up):
            try:
                self.ray.get(actors[a].pid.remote(), timeout=RECHECK_S)
                given_up.discard(a)
            except (errors.GetTimeoutError, errors.RayActorError):
                pass
        return given_up

    def _answers(self, actor) -> bool:
        """Whether ``actor`` answers a ping within ``PING_TIMEOUT_S``. A restarting actor is asked
        again until then (Ray answers ``ActorUnavailableError`` while it restarts: on a loaded
        2-core machine two pings 2 s apart both found it restarting); a dying actor fails the
        first ping and, once restarted, answers a later one; an actor found dead twice is dead."""
        errors = self.ray.exceptions
        unavailable = getattr(errors, "ActorUnavailableError", ())
        deadline = time.monotonic() + PING_TIMEOUT_S
        deaths = 0
        while (left := deadline - time.monotonic()) > 0:
            try:
                self.ray.get(actor.pid.remote(), timeout=left)
                return True
            except errors.GetTimeoutError:
                return False
            except unavailable:
                time.sleep(PING_RETRY_S)
            except errors.RayActorError:
                deaths += 1
                if deaths == 2:
                    return False
        return False

    def _collect(self, ref) -> tuple[Verdict | None, str]:
        """The actor's verdict, or None and why when the actor died under it or raised (the judge
        failing on that node, which the local pool makes a ``judge_error``)."""
        errors = self.ray.exceptions
        try:
            return Verdict.from_dict(self.ray.get(ref)), ""
        except errors.RayActorError as exc:
            return None, f"{ACTOR_DIED} ({_first_line(exc)})"
        except errors.RayTaskError as exc:
            return None, f"judge actor raised ({_first_line(getattr(exc, 'cause', None) or exc)})"

    def _failure(self, key, device: str, reason: str) -> Verdict:
        """The ``judge_error`` verdict of a candidate no actor could judge. Its versions are those
        already asked for, if any: the actors that would answer may all be dead."""
        v = Verdict(task=key[0], device=device, stage=Stage.RUNTIME_ERROR, source_hash=key[1],
                    versions=dict(self._versions.get((key[0], device), {})), error=f"{JUDGE_ERROR}: {reason}",
                    failure=Failure.JUDGE_ERROR)
        return finish_verdict(v)

    def _cached(self, key, device: str) -> Verdict | None:
        hit = self.store.get_verdict(key[0], key[1], device, self.versions(key[0], device), self.config.key())
        if hit is None:
            return None
        verdict = Verdict.from_dict(hit)
        verdict.cached = True
        return verdict

    def _store(self, key, device: str, v: Verdict) -> None:
        """Keep ``v`` and its baseline times, unless the judge failed (as the local evaluator does)."""
        if v.failure is Failure.JUDGE_ERROR:
            return
        self.store.put_verdict(key[0], key[1], device, v.versions, self.config.key(), v.to_dict())
        if v.timed:
            shape = dict(get_task(key[0]).gpu_shapes[0])
            for name, ms in v.times_ms.items():
                if name != "candidate":
                    self.store.put_baseline(key[0], shape, device, v.versions, name, ms)

    def shutdown(self) -> None:
        """Stop the actors (Ray itself is left running)."""
        for handles in self.actors.values():
            for h in handles:
                self.ray.kill(h, no_restart=True)
        self.actors.clear()
        self._given_up.clear()


__all__ = ["INSTALL_HINT", "JudgeActor", "RayEvaluator", "import_ray"]
