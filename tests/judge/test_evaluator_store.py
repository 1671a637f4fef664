"""The evaluator's use of the results store: a repeated candidate is answered from the store,
and any change to the device, the judge config or the task is a different key."""

from __future__ import annotations

import time

import pytest

from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator, software_versions
from hawkeye_env.judge.parent.store import ResultStore, source_hash
from hawkeye_env.judge.shared.verdict import Stage, Verdict
from hawkeye_env.tasks.registry import get_task, solution_source

TASK = "vector_add_fp32"
CONFIG = EvalConfig(seed=0)


@pytest.fixture(scope="module")
def store() -> ResultStore:
    with ResultStore(":memory:") as s:
        yield s


@pytest.fixture(scope="module")
def ev(store: ResultStore) -> Evaluator:
    return Evaluator(store, CONFIG)


@pytest.fixture(scope="module")
def source() -> str:
    return solution_source(get_task(TASK))


@pytest.fixture(scope="module")
def first(ev: Evaluator, source: str) -> tuple[Verdict, float]:
    start = time.monotonic()
    v = ev.evaluate(TASK, source, "cpu")
    return v, time.monotonic() - start


def _same_outcome(a: Verdict, b: Verdict) -> None:
    assert (a.stage, a.reward, a.correct, a.source_hash) == (b.stage, b.reward, b.correct, b.source_hash)
    assert a.feedback == b.feedback
    assert a.trials == b.trials


def test_second_evaluation_is_cached(ev: Evaluator, source: str, first: tuple[Verdict, float]) -> None:
    v1, t1 = first
    assert v1.stage is Stage.CORRECT and not v1.cached
    start = time.monotonic()
    v2 = ev.evaluate(TASK, source, "cpu")
    t2 = time.monotonic() - start
    assert v2.cached
    _same_outcome(v1, v2)
    assert t2 < 0.25 and t2 < t1 / 5, (t1, t2)


def test_crlf_only_change_hits_the_cache(ev: Evaluator, source: str, first: tuple[Verdict, float]) -> None:
    crlf = source.replace("\n", "\r\n")
    assert crlf != source
    v = ev.evaluate(TASK, crlf, "cpu")
    assert v.cached
    _same_outcome(first[0], v)


def test_use_cache_false_rejudges(ev: Evaluator, source: str, first: tuple[Verdict, float]) -> None:
    v = ev.evaluate(TASK, source, "cpu", use_cache=False)
    assert not v.cached
    assert v.stage is first[0].stage and v.reward == first[0].reward


def test_other_source_misses(ev: Evaluator, source: str, first: tuple[Verdict, float]) -> None:
    v = ev.evaluate(TASK, source + "\n# a comment changes the hash\n", "cpu")
    assert not v.cached
    assert v.source_hash != first[0].source_hash
    assert v.stage is Stage.CORRECT


def test_other_config_misses(store: ResultStore, source: str, first: tuple[Verdict, float]) -> None:
    other = Evaluator(store, EvalConfig(seed=0, timeout_s=CONFIG.timeout_s + 1))
    v = other.evaluate(TASK, source, "cpu")
    assert not v.cached
    assert v.stage is Stage.CORRECT


def test_seed_is_not_part_of_the_key(store: ResultStore, source: str, first: tuple[Verdict, float]) -> None:
    """Seeds are drawn fresh per evaluation by default, so they are deliberately left out."""
    v = Evaluator(store, EvalConfig(seed=12345)).evaluate(TASK, source, "cpu")
    assert v.cached


def test_other_device_key_misses(store: ResultStore, source: str, first: tuple[Verdict, float]) -> None:
    """The stored key carries the device (no CUDA here, so the store is queried directly)."""
    digest = source_hash(source)
    cpu_versions = software_versions("cpu", get_task(TASK))
    assert store.get_verdict(TASK, digest, "cpu", cpu_versions, CONFIG.key()) is not None
    assert store.get_verdict(TASK, digest, "cuda", cpu_versions, CONFIG.key()) is None
    gpu_versions = {**cpu_versions, "gpu": "NVIDIA H200", "cuda": "12.8"}
    assert store.get_verdict(TASK, digest, "cuda", gpu_versions, CONFIG.key()) is None


def test_other_task_misses(ev: Evaluator, source: str, first: tuple[Verdict, float]) -> None:
    v = ev.evaluate("softmax_fp32", source, "cpu")
    assert not v.cached
    assert v.task == "softmax_fp32"
    assert v.stage is not Stage.CORRECT


def test_failures_are_cached_too(ev: Evaluator) -> None:
    bad = "import torch\nfrom torch import nn\n\n\nclass ModelNew(nn.Module):\n    def forward(self, a, b)\n"
    v1 = ev.evaluate(TASK, bad, "cpu")
    v2 = ev.evaluate(TASK, bad, "cpu")
    assert v1.stage is Stage.COMPILE_ERROR and not v1.cached
    assert v2.cached
    _same_outcome(v1, v2)


def test_versions_key_hashes_judge_and_task_sources() -> None:
    """Editing the judge, the reward or a task module changes the key, so no stale verdict is served."""
    a = software_versions("cpu", get_task("vector_add_fp32"))
    b = software_versions("cpu", get_task("gemm_bf16"))
    assert a["judge"] == b["judge"] and len(a["judge"]) == 12
    assert a["task"] != b["task"]
