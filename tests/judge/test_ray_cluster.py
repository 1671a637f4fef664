"""The Ray backend on a cluster of three Ray nodes on this machine (``ray.cluster_utils.Cluster``): a
head that runs the driver and no actor (0 CPUs), and two worker nodes of one CPU each, so each of
the two judge actors sits on a node of its own.

What it shows, with a scripted honest, wrong and torch-only candidate of ``vector_add_fp32``:

* every verdict is judged on a worker node, never on the driver's node; both nodes judge; each
  distinct candidate is judged once; each index comes back once, in input order; duplicates share
  one verdict; the store holds each verdict once;
* the trusted parent's steps run in the actor on its node: each actor's own evaluator ran the
  static filter once per candidate it judged (the torch-only candidate is rejected there, with no
  worker) and decided each worker's reply, while the driver's ``Evaluator`` has both steps made to
  fail, so a check run in the driver would fail here;
* a node killed mid-batch (its raylet and processes gone) loses no verdict it had already
  finished, and its unfinished candidate is judged again on the other node; later batches leave
  the dead node's actor out; when the last node dies too, every candidate still unjudged is a
  ``judge_error`` (the judge failed, not the candidate), absent from the store, so it is judged again next time.

One test, not several: the cluster and the actors' first verdicts (each actor's processes import
torch cold) are most of its time, and pytest-xdist may send the tests of one module to different
processes, each of which would start its own cluster.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="the Ray backend is an extra: pip install 'hawkeye-env[ray]'")

from ray.cluster_utils import Cluster  # noqa: E402

from hawkeye_env.judge.parent.batch import ray_backend  # noqa: E402
from hawkeye_env.judge.parent.batch.ray_backend import JudgeActor, RayEvaluator  # noqa: E402
from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator, evaluate_many  # noqa: E402
from hawkeye_env.judge.parent.store import ResultStore, source_hash  # noqa: E402
from hawkeye_env.judge.shared.verdict import Failure, Stage  # noqa: E402
from tests.judge.test_pool import ADD, GOOD, WRONG  # noqa: E402

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]

# Still judging when the other actor's first verdict comes back: its worker sleeps on import.
SLOW_WRONG = WRONG + "\n\nimport time\n\ntime.sleep(5)\n"
TORCH_ONLY = "import torch\n\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, a, b):\n        return a + b\n"
# How long the driver pings an actor before a retry. The backend waits up to 120 s for a restarting
# actor; here a killed node's actor can never restart (no node has a free CPU), so waiting that
# long would only slow the test. The live actor answers within it: it has a free slot
# (workers_per_actor=2 with at most 2 candidates in flight over both actors).
PING_TIMEOUT_S = 5.0


# The trusted parent's steps counted in each actor and refused in the driver: the static filter, and
# the decision on a worker's reply (references, comparisons, the verdict's stage).
PARENT_STEPS = ("check_static", "_read_reply")


class RecordingJudgeActor(JudgeActor):
    """The backend's actor, recording on its node which candidates it started and finished and how
    often its own evaluator ran each of ``PARENT_STEPS`` (in this process)."""

    def __init__(self, config: EvalConfig, device: str):
        super().__init__(config, device)
        self.started: list[str] = []
        self.finished: list[str] = []
        self.runs = dict.fromkeys(PARENT_STEPS, 0)
        for name in PARENT_STEPS:
            setattr(self.evaluator, name, self._counted(name, getattr(self.evaluator, name)))

    def _counted(self, name: str, method):
        def counted(*args, **kwargs):
            self.runs[name] += 1
            return method(*args, **kwargs)

        return counted

    def evaluate(self, task: str, source: str) -> dict:
        self.started.append(source_hash(source))
        verdict = super().evaluate(task, source)
        self.finished.append(source_hash(source))
        return verdict

    def report(self) -> dict:
        return {"node": ray.get_runtime_context().get_node_id(), "started": list(self.started),
                "finished": list(self.finished), "runs": dict(self.runs)}


def _driver_must_not_check(*_args, **_kwargs):
    raise AssertionError("the driver ran a trusted check: the backend judges in its actors")


@pytest.fixture
def cluster(monkeypatch):
    """A head (the driver's node, no CPU for actors) and two one-CPU worker nodes, in a private Ray
    temp folder: a Cluster writes its address where a plain ``ray.init()`` of another test process
    on this host would otherwise find it and join it."""
    temp = tempfile.mkdtemp(prefix="hkray-", dir="/tmp")  # short: Ray's socket paths live under it
    monkeypatch.setenv("RAY_TMPDIR", temp)
    monkeypatch.setattr(ray_backend, "JudgeActor", RecordingJudgeActor)
    monkeypatch.setattr(ray_backend, "PING_TIMEOUT_S", PING_TIMEOUT_S)
    for name in PARENT_STEPS:
        monkeypatch.setattr(Evaluator, name, _driver_must_not_check)
    nodes = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    workers = [nodes.add_node(num_cpus=1) for _ in range(2)]
    try:
        # the actors import this module (their class): the repository on their path, wherever pytest ran
        ray.init(address=nodes.address, log_to_driver=False, configure_logging=False,
                 job_config=ray.job_config.JobConfig(code_search_path=[str(REPO)]))
        nodes.wait_for_nodes()
        yield nodes, workers
    finally:
        ray.shutdown()
        nodes.shutdown()
        shutil.rmtree(temp, ignore_errors=True)


def _variants(source: str, tag: str, n: int) -> list[str]:
    return [f"{source}\n# {tag} {i}\n" for i in range(n)]


def _reports(judge: RayEvaluator) -> list[dict]:
    return ray.get([h.report.remote() for h in judge.actors["cpu"]], timeout=60)


def _spread_batch(judge: RayEvaluator, workers: list) -> None:
    """Both nodes judge, on the nodes, each candidate once, every index back once and in order."""
    before = _reports(judge)
    nodes = [r["node"] for r in before]
    assert sorted(nodes) == sorted(w.node_id for w in workers), "one actor on each worker node"
    assert ray.get_runtime_context().get_node_id() not in nodes, "no actor on the driver's node"
    good, wrong = _variants(GOOD, "spread", 2), _variants(WRONG, "spread", 2)
    jobs = [(ADD, s) for s in (good[0], wrong[0], TORCH_ONLY, good[1], good[0], wrong[1])]
    verdicts, delivered = _judged(judge, jobs, lambda _i, _v: None)
    assert sorted(delivered) == list(range(len(jobs)))
    expected = [Stage.CORRECT, Stage.INCORRECT, Stage.REJECTED, Stage.CORRECT, Stage.CORRECT, Stage.INCORRECT]
    assert [v.stage for v in verdicts] == expected, [(v.stage.value, v.error[:200]) for v in verdicts]
    assert [x.code for x in verdicts[2].violations] == ["no_kernel_launch"]
    assert not any(k.startswith("worker.") for k in verdicts[2].profile), "rejected before any worker"
    assert all(any(k.startswith("worker.") for k in v.profile) for i, v in enumerate(verdicts) if i != 2)
    assert verdicts[4] is verdicts[0]
    after = _reports(judge)
    judged = [h for r in after for h in r["finished"]]
    assert sorted(judged) == sorted({v.source_hash for v in verdicts}), "each distinct candidate judged once"
    assert all(r["finished"] for r in after), f"both nodes judge: {[len(r['finished']) for r in after]}"
    for r in after:  # the torch-only candidate is decided by the static filter, with no reply
        reached_a_worker = [h for h in r["finished"] if h != source_hash(TORCH_ONLY)]
        assert r["runs"] == {"check_static": len(r["finished"]), "_read_reply": len(reached_a_worker)}, r
    assert judge.store.count() == len(judged)


def _kill_node_of(cluster: Cluster, workers: list, report: dict) -> None:
    cluster.remove_node(next(w for w in workers if w.node_id == report["node"]), allow_graceful=False)


def _one_node_dies(judge: RayEvaluator, cluster: Cluster, workers: list) -> int:
    """At the first verdict, kill the node whose actor is still judging (the slow candidate, sent to
    the second actor): every candidate is still judged, the lost one again on the other node, and
    nothing the killed node finished is judged twice. Returns the index of the surviving actor."""
    good = _variants(GOOD, "one", 2)
    jobs = [(ADD, s) for s in (good[0], SLOW_WRONG, good[1], _variants(WRONG, "one", 1)[0])]
    at_kill: list[dict] = []  # both actors' reports just before the kill, in actor order

    def kill_the_busy_node(_index, _verdict):
        if not at_kill:
            at_kill.extend(_reports(judge))
            busy = [r for r in at_kill if len(r["started"]) > len(r["finished"])]
            assert len(busy) == 1, f"one actor still judging at the first verdict: {at_kill}"
            _kill_node_of(cluster, workers, busy[0])

    verdicts, delivered = _judged(judge, jobs, kill_the_busy_node)
    assert sorted(delivered) == list(range(len(jobs)))
    stages = [Stage.CORRECT, Stage.INCORRECT, Stage.CORRECT, Stage.INCORRECT]
    assert [v.stage for v in verdicts] == stages, [v.error[:300] for v in verdicts]
    assert all(v.failure is Failure.NONE for v in verdicts)
    survivor = next(i for i, r in enumerate(at_kill) if len(r["started"]) == len(r["finished"]))
    dead = at_kill[1 - survivor]
    kept = ray.get(judge.actors["cpu"][survivor].report.remote(), timeout=60)
    lost = set(dead["started"]) - set(dead["finished"])
    assert lost == {source_hash(SLOW_WRONG)}
    assert lost <= set(kept["finished"]), "the killed node's unfinished candidate was judged again elsewhere"
    assert not set(dead["finished"]) & set(kept["finished"]), "a verdict the killed node finished was redone"
    assert {v.source_hash for v in verdicts} <= set(dead["finished"]) | set(kept["finished"])
    assert judge._given_up["cpu"] == {1 - survivor}, "later batches leave the dead node's actor out"
    return survivor


def _last_node_dies(judge: RayEvaluator, cluster: Cluster, workers: list, survivor: int) -> None:
    """At the first verdict, kill the last node: what it finished is kept, every candidate left is
    a ``judge_error``, and no judge error is stored."""
    jobs = [(ADD, s) for s in (*_variants(GOOD, "last", 2), _variants(WRONG, "last", 1)[0])]
    stored_before = judge.store.count()
    at_kill: list[dict] = []

    def kill_the_last_node(_index, _verdict):
        if not at_kill:
            at_kill.append(ray.get(judge.actors["cpu"][survivor].report.remote(), timeout=60))
            _kill_node_of(cluster, workers, at_kill[0])

    verdicts, delivered = _judged(judge, jobs, kill_the_last_node)
    assert sorted(delivered) == list(range(len(jobs)))
    errors = [v for v in verdicts if v.failure is Failure.JUDGE_ERROR]
    assert errors, "the last node died with candidates left: they are judge errors"
    assert all(v.stage is Stage.RUNTIME_ERROR and v.error.startswith("judge_error: ") and not v.violations
               for v in errors), [v.error[:200] for v in errors]
    for stage, v in zip([Stage.CORRECT, Stage.CORRECT, Stage.INCORRECT], verdicts):
        if v.failure is not Failure.JUDGE_ERROR:
            assert v.stage is stage and v.failure is Failure.NONE, (v.stage.value, v.error[:300])
        if v.source_hash in at_kill[0]["finished"]:
            assert v.failure is Failure.NONE, "a verdict finished before its node died was lost"
    assert judge.store.count() - stored_before == len(verdicts) - len(errors), "judge errors are never stored"
    assert judge._given_up["cpu"] == {0, 1}


def _judged(judge: RayEvaluator, jobs: list, on_verdict) -> tuple[list, list[int]]:
    """``evaluate_many`` over ``jobs`` with ``on_verdict`` called first; the verdicts, checked to be
    in input order, and the indices in the order they came back."""
    delivered: list[int] = []

    def record(index, verdict):
        on_verdict(index, verdict)
        delivered.append(index)

    verdicts = evaluate_many(judge, jobs, device="cpu", workers=2, on_verdict=record)
    assert [v.source_hash for v in verdicts] == [source_hash(s) for _, s in jobs]
    return verdicts, delivered


def test_two_nodes_judge_a_batch_and_survive_node_deaths(cluster):
    nodes, workers = cluster
    judge = RayEvaluator(ResultStore(":memory:"), EvalConfig(seed=0), num_actors=2, workers_per_actor=2)
    judge.actors_for("cpu")
    _spread_batch(judge, workers)
    survivor = _one_node_dies(judge, nodes, workers)
    _last_node_dies(judge, nodes, workers, survivor)
