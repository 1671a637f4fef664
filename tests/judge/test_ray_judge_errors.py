"""The Ray driver's failures of the judge, with no Ray at all: the verdict of a candidate no actor
could judge (``RayEvaluator._failure``) is a ``judge_error`` (the judge failed, not the candidate),
built without asking an actor for versions (they may all be dead) and never written to the store,
so it is judged again next time; an actor that died or raised under a candidate gives no verdict
and the reason (``_collect``), so the candidate is retried instead of the batch failing. The same
verdicts on a real cluster whose nodes die: ``test_ray_cluster.py``."""

from __future__ import annotations

import types

from hawkeye_env.judge.parent.batch.ray_backend import RayEvaluator
from hawkeye_env.judge.parent.eval_config import EvalConfig
from hawkeye_env.judge.parent.store import ResultStore, source_hash
from hawkeye_env.judge.shared.verdict import Failure, Stage, Verdict

KEY = ("vector_add_fp32", source_hash("class ModelNew: pass"))


class _NoRay:
    """Any use of Ray fails the test: the failure verdict must be built without it."""

    def __getattr__(self, name):
        raise AssertionError(f"ray.{name} used to build a judge error")


def _driver(versions: dict | None = None) -> RayEvaluator:
    judge = RayEvaluator.__new__(RayEvaluator)
    judge.ray, judge.store, judge.config = _NoRay(), ResultStore(":memory:"), EvalConfig()
    judge._versions = {} if versions is None else {(KEY[0], "cpu"): versions}
    return judge


def test_no_live_actor_is_a_judge_error_without_asking_an_actor():
    v = _driver()._failure(KEY, "cpu", "no judge actor is alive")
    assert (v.stage, v.failure, v.source_hash, v.versions) == (Stage.RUNTIME_ERROR, Failure.JUDGE_ERROR, KEY[1], {})
    assert v.error == "judge_error: no judge actor is alive" and v.feedback and v.reward_version


def test_a_judge_error_keeps_the_versions_already_known_and_is_never_stored():
    judge = _driver({"torch": "2.13.0"})
    failed = judge._failure(KEY, "cpu", "judge actor died (ActorDiedError: gone)")
    assert failed.versions == {"torch": "2.13.0"}
    judge._store(KEY, "cpu", failed)
    assert judge.store.count() == 0
    judged = Verdict(task=KEY[0], device="cpu", stage=Stage.INCORRECT, source_hash=KEY[1], versions=failed.versions)
    judge._store(KEY, "cpu", judged)
    assert judge.store.count() == 1


class _ActorError(Exception):
    pass


class _TaskError(Exception):
    def __init__(self, cause: BaseException):
        super().__init__("ray::JudgeActor.evaluate() (pid=1, ip=10.0.0.1)")
        self.cause = cause


def _collecting(raised: BaseException) -> RayEvaluator:
    """A driver whose ``ray.get`` raises ``raised``, with Ray's two error kinds faked."""
    judge = RayEvaluator.__new__(RayEvaluator)

    def get(_ref):
        raise raised

    judge.ray = types.SimpleNamespace(get=get, exceptions=types.SimpleNamespace(RayActorError=_ActorError,
                                                                                RayTaskError=_TaskError))
    return judge


def test_an_actor_that_raised_gives_no_verdict_and_says_why():
    """The judge raising in an actor (here a task the node cannot find): the candidate is retried, not
    the batch lost."""
    verdict, why = _collecting(_TaskError(KeyError("unknown task g0_00000")))._collect("ref")
    assert verdict is None and why == "judge actor raised (KeyError: 'unknown task g0_00000')"


def test_an_actor_that_died_gives_no_verdict_and_says_why():
    verdict, why = _collecting(_ActorError("The actor died unexpectedly\nmore"))._collect("ref")
    assert verdict is None and why == "judge actor died (_ActorError: The actor died unexpectedly)"
