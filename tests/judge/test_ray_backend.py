"""The Ray backend on a local Ray with CPU actors (Triton interpreter): the same verdicts as the
single evaluator on the mixed batch of ``test_pool.py``, every verdict in the driver's store, and
no lost result when the actors are killed mid-batch."""

from __future__ import annotations

import pytest

ray = pytest.importorskip("ray", reason="the Ray backend is an extra: pip install 'hawkeye-env[ray]'")

from hawkeye_env.judge.parent.batch.ray_backend import RayEvaluator  # noqa: E402
from hawkeye_env.judge.parent.evaluator import EvalConfig, evaluate_many  # noqa: E402
from hawkeye_env.judge.parent.store import ResultStore  # noqa: E402
from hawkeye_env.judge.shared.verdict import Stage  # noqa: E402
from tests.judge.test_pool import ADD, CRASHES, GOOD, HANG_TIMEOUT_S, HANGS, MIXED, WRONG, _summary  # noqa: E402


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


def test_ray_matches_single_evaluator_on_a_mixed_batch(local_ray):
    judge = RayEvaluator(ResultStore(":memory:"), EvalConfig(seed=0, static_checks=False, timeout_s=HANG_TIMEOUT_S),
                         num_actors=2)
    jobs = [(task, source) for task, source, _, _ in MIXED]
    verdicts = evaluate_many(judge, jobs + jobs[1:2], device="cpu")
    expected_failures = {CRASHES: "crash", HANGS: "timeout"}
    for i, ((task, _, stage, codes), v) in enumerate(zip(MIXED, verdicts)):
        assert _summary(v) == (stage, codes, expected_failures.get(i, "")), (task, v.feedback)
    assert verdicts[-1] is verdicts[1]
    assert judge.store.count() == len(jobs)
    again = judge.evaluate(*jobs[1], device="cpu")
    assert again.cached and again.stage is Stage.CORRECT
    judge.shutdown()


def test_actors_killed_mid_batch_lose_no_result(local_ray):
    judge = RayEvaluator(ResultStore(":memory:"), EvalConfig(seed=0), num_actors=2)
    jobs = [(ADD, GOOD), (ADD, WRONG), (ADD, GOOD + "\n# 2\n"), (ADD, WRONG + "\n# 2\n"), (ADD, GOOD + "\n# 3\n")]
    killed = []

    def kill_all_actors_once(_index, _verdict):
        if not killed:
            for handle in judge.actors["cpu"]:
                ray.kill(handle, no_restart=False)
            killed.append(True)

    verdicts = evaluate_many(judge, jobs, device="cpu", on_verdict=kill_all_actors_once)
    assert killed
    assert [v.stage for v in verdicts] == [Stage.CORRECT, Stage.INCORRECT, Stage.CORRECT, Stage.INCORRECT,
                                           Stage.CORRECT], [(v.stage.value, v.error[:300]) for v in verdicts]
    assert judge.store.count() == len(jobs)
    judge.shutdown()
