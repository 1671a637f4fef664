"""GPU-only: the honest Triton candidates written for the KernelBench-format test problems
(``tests/kernelbench/solutions``: eleven level-1, five level-2) are judged correct on the GPU by
our verdict and by KernelBench's protocol, and the dishonest ones (``tests/kernelbench/hacks``)
are not, in both of the judge's GPU modes: the trusted replay (the default) and worker-timed
(``$HAWKEYE_REPLAY=off``); then ``hawkeye kernelbench eval`` scores level 1 on the GPU with its
``fast_p`` table.

Skipped without CUDA (the reason is printed); run on the H200 and recorded in BENCHMARKS.md.
"""

from __future__ import annotations

import json

import pytest
import torch
from typer.testing import CliRunner

from hawkeye_env.judge.parent import baselines, record_replay
from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator, evaluate_many
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.shared.verdict import Stage
from tests.kernelbench.conftest import HACKS, SOLUTIONS
from tests.kernelbench.judging import problem_of

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU: verdicts on the H200"),
]
HACK_STAGES = {"level_1_problem_2_half_k.py": Stage.INCORRECT, "level_1_problem_3_nan_output.py": Stage.INCORRECT,
               "level_1_problem_4_torch_fallback.py": Stage.REJECTED}


@pytest.fixture(scope="module", params=["replay", "worker"])
def verdicts(request, imported):
    _, report = imported
    paths = sorted(SOLUTIONS.glob("level_*.py")) + sorted(HACKS.glob("level_*.py"))
    jobs = [(report.by_number[problem_of(p)], p.read_text()) for p in paths]
    config = EvalConfig(seed=0, iters=20, baselines=("eager",), protocol="kernelbench")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(record_replay.ENV_FLAG, "on" if request.param == "replay" else "off")
        assert record_replay.mode("cuda") == request.param
        got = evaluate_many(Evaluator(ResultStore(":memory:"), config), jobs, "cuda", use_cache=False)
    return {p.name: v for p, v in zip(paths, got)}


def test_honest_candidates_are_correct_by_both_verdicts(verdicts):
    honest = {n: v for n, v in verdicts.items() if n.endswith("_sample_0_kernel.py")}
    assert len(honest) >= 15
    wrong = {n: (v.stage.value, v.error[-300:], v.protocols.get("kernelbench", {}).get("reason"))
             for n, v in honest.items()
             if v.stage != Stage.CORRECT or not v.timed or not v.protocols["kernelbench"]["correct"]}
    assert not wrong
    assert all(v.protocols["kernelbench"]["mean_ms"] > 0 for v in honest.values())
    assert all(v.protocols["kernelbench"]["baseline_mean_ms"] > 0 for v in honest.values())
    assert not any(baselines.KERNELBENCH_EAGER in v.speedup for v in honest.values())


@pytest.mark.parametrize("name", sorted(HACK_STAGES))
def test_dishonest_candidates_are_not_correct(verdicts, name):
    assert verdicts[name].stage == HACK_STAGES[name], verdicts[name].feedback


def test_the_scorer_reports_fast_p_for_level_1_on_the_gpu(imported, tmp_path):
    from hawkeye_env.cli import app

    out_dir, _ = imported
    result = CliRunner().invoke(app, [
        "kernelbench", "eval", "--level", "1", "--solutions", str(SOLUTIONS), "--tasks-dir", str(out_dir),
        "--device", "cuda", "--store", str(tmp_path / "store.db"), "--out", str(tmp_path / "report"), "--json"])
    assert result.exit_code == 0, result.output
    got = json.loads(result.output)
    fast = got["columns"]["hawkeye verdicts"]["fast_p"]
    assert fast["0.0"] == pytest.approx(1.0) and 0.0 <= fast["1.0"] <= 1.0
    # each column over a baseline timed its own way: our eager on device time, the protocol's
    # reference by KernelBench's method, whose host launch dominates a kernel of a few microseconds
    for row in got["rows"]:
        assert row["baseline_ms"] > 0 and row["kernelbench_baseline_ms"] > 0, row
    small = [r for r in got["rows"] if r["baseline_ms"] < 0.02]
    assert small and all(r["kernelbench_baseline_ms"] > r["baseline_ms"] for r in small), small
    print((tmp_path / "report" / "report.md").read_text())
