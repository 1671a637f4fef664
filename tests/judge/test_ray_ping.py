"""The Ray driver's ping of an actor before a retry (``RayEvaluator._answers``), against a fake Ray
whose ``get`` answers a scripted sequence: a restarting actor is asked again until it answers, an
actor found dead twice is given up, a ping that times out is given up. An actor given up on is
left out of later batches, asked only briefly at their start, and judges again once it answers
(``_still_given_up``, ``_pick``). No Ray is started."""

from __future__ import annotations

import types

from hawkeye_env.judge.parent.batch import ray_backend
from hawkeye_env.judge.parent.batch.ray_backend import RayEvaluator


class _ActorError(Exception):
    pass


class _Unavailable(_ActorError):  # as in Ray: ActorUnavailableError is a RayActorError
    pass


class _Timeout(Exception):
    pass


def _judge(script: list):
    """A RayEvaluator whose ``ray.get`` pops ``script``: an exception class is raised, a value is
    returned; ``calls`` counts the pings."""
    calls = []

    def get(_ref, timeout):
        assert timeout > 0
        calls.append(timeout)
        step = script.pop(0)
        if isinstance(step, type):
            raise step("scripted")
        return step

    errors = types.SimpleNamespace(ActorUnavailableError=_Unavailable, RayActorError=_ActorError,
                                   GetTimeoutError=_Timeout)
    judge = RayEvaluator.__new__(RayEvaluator)
    judge.ray = types.SimpleNamespace(get=get, exceptions=errors)
    judge._given_up = {}
    actor = types.SimpleNamespace(pid=types.SimpleNamespace(remote=lambda: "ref"))
    return judge, actor, calls


def test_a_restarting_actor_is_pinged_until_it_answers(monkeypatch):
    monkeypatch.setattr(ray_backend, "PING_RETRY_S", 0.0)
    # four "restarting" answers: more than the two pings a fixed count allowed (seen on 2 loaded cores)
    judge, actor, calls = _judge([_Unavailable] * 4 + [1234])
    assert judge._answers(actor) is True and len(calls) == 5


def test_an_actor_found_dead_twice_is_given_up():
    judge, actor, calls = _judge([_ActorError, _ActorError, 1234])
    assert judge._answers(actor) is False and len(calls) == 2


def test_a_dying_actor_that_restarts_answers_its_second_ping():
    judge, actor, calls = _judge([_ActorError, 1234])
    assert judge._answers(actor) is True and len(calls) == 2


def test_a_ping_that_times_out_is_given_up():
    judge, actor, calls = _judge([_Timeout, 1234])
    assert judge._answers(actor) is False and len(calls) == 1


def test_restarting_forever_ends_at_the_ping_deadline(monkeypatch):
    monkeypatch.setattr(ray_backend, "PING_RETRY_S", 0.0)
    monkeypatch.setattr(ray_backend, "PING_TIMEOUT_S", 0.05)
    judge, actor, calls = _judge([_Unavailable] * 10**6)
    assert judge._answers(actor) is False and len(calls) > 1


def test_an_actor_given_up_on_is_asked_briefly_at_the_next_batch_and_left_out():
    # restarting with nowhere to go (its node lost for good): one short ping, not PING_TIMEOUT_S
    judge, actor, calls = _judge([_Unavailable])
    judge._given_up["cpu"] = {0}
    given_up = judge._still_given_up("cpu", [actor, actor])
    assert given_up == {0} and calls == [ray_backend.RECHECK_S]
    assert judge._pick([actor, actor], [0, 3], given_up, check=False) == 1 and len(calls) == 1


def test_an_actor_given_up_on_that_answers_again_judges_again():
    judge, actor, calls = _judge([1234])
    judge._given_up["cpu"] = {0}
    assert judge._still_given_up("cpu", [actor]) == set() and judge._given_up["cpu"] == set()
    assert judge._pick([actor], [0], judge._given_up["cpu"], check=False) == 0


def test_a_retry_gives_up_on_an_actor_that_does_not_answer():
    judge, actor, calls = _judge([_ActorError, _ActorError, 1234])
    given_up: set[int] = set()
    assert judge._pick([actor, actor], [0, 1], given_up, check=True) == 1 and given_up == {0}
