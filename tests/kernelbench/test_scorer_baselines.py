"""Each column of ``hawkeye kernelbench eval`` divides by a baseline timed as its candidate is:
our verdicts over our eager baseline (device time), KernelBench's protocol over the reference
timed by KernelBench's method in the same run (``baseline_mean_ms``), or over a baseline JSON
when one is given. The GPU figures come from verdicts; here the verdicts are made up, so the
test checks the arithmetic of the columns, not a judge."""

from __future__ import annotations

import json

import pytest

from evals import kernelbench_eval
from hawkeye_env.judge.parent import evaluator as evaluator_module
from hawkeye_env.judge.parent.decide import kernelbench_protocol as kb
from hawkeye_env.judge.shared.verdict import Stage, Verdict
from tests.kernelbench.conftest import SOLUTIONS

# problem number -> (our device ms, our eager ms, KernelBench mean ms, its eager mean ms)
TIMES = {1: (0.005, 0.010, 0.080, 0.040), 2: (1.0, 0.5, 1.0, 0.5)}


def _verdict(task: str, number: int) -> Verdict:
    ours, eager, mean, base = TIMES.get(number, (1.0, 1.0, 1.0, 1.0))
    v = Verdict(task=task, device="cuda", stage=Stage.CORRECT, correct=True, timed=True,
                times_ms={"candidate": ours, "eager": eager})
    v.protocols[kb.PROTOCOL] = kb.report(True, 0, "", mean, kb.ATOL, kb.RTOL)
    kb.set_baseline(v, {"median_ms": base, "method": "back_to_back_mean"})
    return v


@pytest.fixture
def judged(imported, monkeypatch):
    out, report = imported
    number_of = {task: n for (level, n), task in report.by_number.items() if level == 1}

    def fake_many(evaluator, jobs, device, workers=None):
        return [_verdict(task, number_of[task]) for task, _ in jobs]

    monkeypatch.setattr(evaluator_module, "evaluate_many", fake_many)
    return out


def test_our_column_reads_our_eager_and_the_protocol_its_own_baseline(judged):
    result = kernelbench_eval.judge_level(judged, 1, SOLUTIONS, device="cpu")
    rows = {r["number"]: r for r in result["rows"]}
    assert rows[1]["baseline_ms"] == 0.010 and rows[1]["kernelbench_baseline_ms"] == 0.040
    ours, theirs = result["columns"]["hawkeye verdicts"]["fast_p"], result["columns"]["KernelBench protocol"]["fast_p"]
    n = len(result["rows"])
    assert n == 11
    # problem 1: 2x on device time, 0.5x by KernelBench's launch-inclusive mean; problem 2: 0.5x
    # both; the other nine 1x both (not faster than p = 1)
    assert ours[1.5] == pytest.approx(1 / n) and theirs[1.5] == 0.0
    assert ours[0.5] == pytest.approx(10 / n) and theirs[0.5] == pytest.approx(9 / n)
    assert result["kernelbench_baseline"] == kernelbench_eval.BASELINE_KERNELBENCH_METHOD
    text = kernelbench_eval.render(result)
    assert "| 0.0100 |" in text and "| 0.0400 |" in text


def test_a_baseline_json_replaces_the_protocols_baseline_only(judged, tmp_path):
    rows = kernelbench_eval.level_problems(judged, 1)
    names = {r["number"]: r["problem"] for r in rows}
    path = tmp_path / "baseline_time_torch.json"
    path.write_text(json.dumps({"level1": {names[n]: {"mean": 0.16} for n in names}}))
    result = kernelbench_eval.judge_level(judged, 1, SOLUTIONS, device="cpu", baseline=path)
    by_number = {r["number"]: r for r in result["rows"]}
    assert by_number[1]["kernelbench_baseline_ms"] == 0.16  # the JSON's mean
    assert by_number[1]["baseline_ms"] == 0.010  # ours stays our eager device time
    assert result["kernelbench_baseline"] == str(path)


def test_set_baseline_fills_only_a_protocol_entry_with_a_measured_time():
    v = Verdict(task="t", device="cuda", stage=Stage.CORRECT)
    kb.set_baseline(v, {"median_ms": 0.3})
    assert v.protocols == {}  # no protocol judged: nothing to fill
    v.protocols[kb.PROTOCOL] = kb.report(True, 0, "", 0.1, kb.ATOL, kb.RTOL)
    kb.set_baseline(v, {"unavailable": "raised"})
    assert v.protocols[kb.PROTOCOL]["baseline_mean_ms"] is None
    kb.set_baseline(v, {"median_ms": 0.3})
    assert v.protocols[kb.PROTOCOL]["baseline_mean_ms"] == 0.3
