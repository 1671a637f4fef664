"""The trusted parent rebuilds every trial's inputs and float64 reference from its seed (and its
native-precision reference beside it), exactly as the worker built the trial; the worker ships
outputs only."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import torch

from hawkeye_env.judge.parent.decide import references
from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator, plan_trials
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.shared.inputs import fresh_seed, make_inputs
from hawkeye_env.judge.shared.inputs import refill as _refill
from hawkeye_env.judge.shared.verdict import Stage
from hawkeye_env.tasks.registry import get_task, solution_source, task_module

HACKS = Path(__file__).resolve().parent.parent / "candidates" / "hacks"


def _judge(task: str, source: str, tmp_path):
    config = EvalConfig(seed=11, timeout_s=120)
    return Evaluator(ResultStore(tmp_path / "s.sqlite3"), config).evaluate(task, source, "cpu")


@pytest.mark.parametrize(("task", "edit", "stage"), [
    ("softmax_fp32", None, Stage.CORRECT),
    ("rmsnorm_bf16", None, Stage.CORRECT),
    ("vector_add_fp32", ("a + b", "a - b"), Stage.INCORRECT),
])
def test_verdicts_with_the_parents_references(task, edit, stage, tmp_path):
    source = solution_source(get_task(task))
    if edit:
        source = source.replace(*edit)
    v = _judge(task, source, tmp_path)
    assert v.stage == stage, v.feedback
    assert v.trials and all(t["ok"] for t in v.trials[:-1])


def test_a_stale_output_is_still_caught(tmp_path, monkeypatch):
    """With the replay off the worker's own repeat returns the cache (with the replay on, the
    replayed second forward returns it: ``test_adversarial.py``), and the parent's references
    catch it."""
    monkeypatch.setenv("HAWKEYE_REPLAY", "off")
    source = (HACKS / "h07_self_cache_decoy.py").read_text()
    config = EvalConfig(seed=11, timeout_s=120, static_checks=False)
    v = Evaluator(ResultStore(tmp_path / "s.sqlite3"), config).evaluate("vector_add_fp32", source, "cpu")
    assert v.stage is Stage.REJECTED and {x.code for x in v.violations} & {"stale_output", "nondeterministic"}


def test_parent_references_equal_the_workers():
    spec = get_task("layernorm_bf16")
    trial = plan_trials(spec, "cpu", 5)[-1]
    got = references.trial_references(spec, trial, "cpu")
    task = task_module(spec)
    torch.manual_seed(trial["seed"])  # what the worker's build does before Model(...)
    ref, inputs = references.build(spec, trial["shape"], trial["distribution"], trial["seed"], "cpu")
    expected = references.reference64(ref, inputs)
    assert all(torch.equal(a, b) for a, b in zip(got.reference, expected))
    fresh_inputs = make_inputs(task, trial["shape"], trial["distribution"], fresh_seed(trial["seed"]), "cpu")
    assert trial.get("rerun")
    assert all(torch.equal(a, b) for a, b in zip(got.fresh_reference, references.reference64(ref, fresh_inputs)))
    with torch.no_grad():
        native, fresh_native = ref(*inputs), ref(*fresh_inputs)
    assert [n.dtype for n in got.native] == [torch.bfloat16] and torch.equal(got.native[0], native)
    assert torch.equal(got.fresh_native[0], fresh_native)


def test_builds_from_many_threads_match_sequential_builds():
    spec = get_task("cross_entropy_fp32")  # integer targets come from torch's global RNG
    shape = dict(spec.cpu_shapes[0])
    seeds = list(range(16))
    sequential = [references.build(spec, shape, "normal", s, "cpu")[1] for s in seeds]
    got: dict[int, list] = {}

    def one(s: int) -> None:
        got[s] = references.build(spec, shape, "normal", s, "cpu")[1]

    threads = [threading.Thread(target=one, args=(s,)) for s in seeds]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for s, want in zip(seeds, sequential):
        assert all(torch.equal(a, b) for a, b in zip(got[s], want)), s


def test_kept_references_replay_the_timing_refills():
    spec = get_task("softmax_fp32")
    seed, refills = 7, [3, 1, 4]
    got = references.kept_references(spec, seed, refills, "cpu")
    ref, inputs = references.build(spec, dict(spec.gpu_shapes[0]), "normal", seed, "cpu")
    generator = torch.Generator().manual_seed(seed)
    for n in range(1, max(refills) + 1):
        _refill(inputs, generator)
        if n in refills:
            want, kept = references.reference64(ref, inputs), got[refills.index(n)]
            assert all(torch.equal(a, b) for a, b in zip(kept["reference"], want)), n
            assert torch.equal(kept["native"][0], ref(*inputs)), n


def test_cuda_linalg_loads_once_before_concurrent_comparisons(monkeypatch):
    """PyTorch's lazy CUDA linalg load is not thread safe: the judge loads it once, under a lock,
    before any CUDA comparison, however many threads enter at once."""
    import threading
    import time

    from hawkeye_env.judge.parent.decide import comparing

    calls, inside = [], []

    def probe(device):
        inside.append(device)
        time.sleep(0.05)  # long enough for the other threads to arrive
        calls.append(len(inside))

    monkeypatch.setattr(comparing, "_linalg_probe", probe)
    monkeypatch.setattr(comparing, "_cuda_linalg_loaded", False)
    barrier = threading.Barrier(8)

    def compare():
        barrier.wait()
        with comparing.comparing_on(None, "cuda") as where:
            assert where == "cuda"

    threads = [threading.Thread(target=compare) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == [1] and inside == ["cuda"]
    with comparing.comparing_on(None, "cpu"):
        pass
    assert calls == [1]


def test_a_failed_cuda_linalg_load_does_not_fail_comparisons(monkeypatch, caplog):
    """A probe that raises is logged once; comparisons go on (their own linalg calls report any real
    error against the candidate's reply as before)."""
    from hawkeye_env.judge.parent.decide import comparing

    calls = []

    def probe(device):
        calls.append(device)
        raise RuntimeError("no linalg library")

    monkeypatch.setattr(comparing, "_linalg_probe", probe)
    monkeypatch.setattr(comparing, "_cuda_linalg_loaded", False)
    for _ in range(2):
        with comparing.comparing_on(None, "cuda") as where:
            assert where == "cuda"
    assert calls == ["cuda"] and "no linalg library" in caplog.text
