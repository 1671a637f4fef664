"""Honest Triton candidates for five level-2-style problems (fused Linear epilogues, dropout in
eval mode, a LayerNorm made in ``forward``, a layer called through a closure) are judged correct
on CPU by the real judge, through ``hawkeye kernelbench eval`` and the folder layout."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from tests.kernelbench.conftest import SOLUTIONS


def test_honest_candidates_are_correct_through_the_scorer(imported, tmp_path):
    """``hawkeye kernelbench eval`` judges sample 0 of every level-2 problem with the Evaluator on
    CPU: all five are correct (fast_0 = 1; untimed, so no speedup counts), and the KernelBench
    column reads its own eval_results.json."""
    from hawkeye_env.cli import app

    out_dir, _ = imported
    theirs = tmp_path / "eval_results.json"
    theirs.write_text(json.dumps({str(n): [{"sample_id": 0, "correctness": n != 5, "runtime": 1.0}]
                                  for n in range(1, 6)}))
    report = tmp_path / "report"
    result = CliRunner().invoke(app, [
        "kernelbench", "eval", "--level", "2", "--solutions", str(SOLUTIONS), "--tasks-dir", str(out_dir),
        "--device", "cpu", "--store", str(tmp_path / "store.db"), "--out", str(report),
        "--kernelbench-results", str(theirs), "--json"])
    assert result.exit_code == 0, result.output
    got = json.loads(result.output)
    assert [r["stage"] for r in got["rows"]] == ["correct"] * 5
    assert got["columns"]["hawkeye verdicts"]["fast_p"]["0.0"] == 1.0
    assert got["columns"]["hawkeye verdicts"]["fast_p"]["1.0"] == 0.0  # untimed on CPU
    assert got["columns"]["KernelBench eval_results"]["fast_p"]["0.0"] == 0.8
    assert (report / "report.md").read_text().startswith("# KernelBench level 2 (cpu")
