"""Recurring errors (``recurrence.py``, docs/threat-model.md #28): elements over their bound at the same
scattered positions in every call fail the verdict, though each trial alone passes every other rule;
honest rounding, whose few over-bound elements move with the inputs, passes, also when it is denser
in one region of the output.

The hack candidates (``tests/candidates/hacks/h28_*``) run in this process under the Triton
interpreter on a CPU verdict's planned trials and are decided by ``checks.check_trials`` (the judged
end-to-end verdict of ``h28_layernorm_fixed_indices`` is in ``test_adversarial.py``)."""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path

import pytest
import torch

from hawkeye_env.judge.parent.decide import checks, correctness, recurrence, references
from hawkeye_env.judge.parent.trial_plan import plan_trials
from hawkeye_env.judge.shared.inputs import fresh_seed, make_inputs
from hawkeye_env.judge.shared.verdict import Stage, Verdict
from hawkeye_env.tasks.registry import get_task, task_module
from hawkeye_env.tasks.spec import BF16

os.environ.setdefault("TRITON_INTERPRET", "1")

from hawkeye_env.judge.sandboxed.common.interpreter.fixes import install_interpreter_fixes  # noqa: E402

HACKS = Path(__file__).parent.parent / "candidates" / "hacks"
N = 37000


def _every_1031(n: int = N) -> torch.Tensor:
    return torch.arange(1030, n, 1031)


def _drawn(size: int, calls: int, seed: int, region: int = N) -> list[torch.Tensor]:
    """``calls`` sets of ``size`` distinct positions each, uniform over the last ``region`` of ``N``."""
    g = torch.Generator().manual_seed(seed)
    return [(N - region + torch.rand(region, generator=g).topk(size).indices).sort().values for _ in range(calls)]


def test_over_bound_elements_that_move_with_the_inputs_pass():
    """Over-bound sets of honest sizes (0.05% of the elements, more than any expert has: none had
    one on CPU) drawn anew per call, spread or twenty times denser in the last 5% of the output
    (error growing along a scan), pass on every seed."""
    for seed in range(10):
        for region in (N, N // 20):
            found = recurrence.recurring(_drawn(18, 6, seed, region), N)
            assert found.score < 1.0, (seed, region, found)


def test_a_fixed_index_set_fails_and_one_element_needs_three_calls():
    g = torch.Generator().manual_seed(0)
    fixed = _every_1031()
    kept = [fixed[torch.rand(fixed.numel(), generator=g) < 0.8] for _ in range(3)]
    found = recurrence.recurring(kept, N)
    assert found.score >= 1.0 and found.recurring >= 20 and found.elements[0] % 1031 == 1030
    one = torch.tensor([1030])
    assert recurrence.recurring([one, one], N).score < 1.0
    assert recurrence.recurring([one, one, one], N).score >= 1.0
    assert recurrence.recurring([one], N) is None


def test_compare_returns_the_elements_over_the_quantile_bound():
    g = torch.Generator().manual_seed(2)
    ref = torch.randn(37, 1000, dtype=torch.float64, generator=g)
    out = ref.clone().reshape(-1)
    out[_every_1031()] *= 1.1
    c = correctness.compare(out.reshape(37, 1000).to(torch.bfloat16), ref, torch.bfloat16, BF16,
                            native=ref.to(torch.bfloat16))
    assert c["ok"], c["reason"]
    over = set(c["over_bound"].tolist())
    assert over and over <= set(_every_1031().tolist()) and len(over) >= 25


def _verdict() -> Verdict:
    return Verdict(task="layernorm_bf16", device="cpu", stage=Stage.CORRECT, source_hash="0" * 64, versions={})


def _synthetic(bad: bool) -> tuple[list, list]:
    """Three trials of one 37x1000 shape (the last with a fresh call): bf16 rounding of the
    reference, with the ``_every_1031`` elements 10% off when ``bad``."""
    plan, rows = [], []
    for k in range(3):
        ref = torch.randn(37, 1000, dtype=torch.float64, generator=torch.Generator().manual_seed(k))
        out = ref.clone().reshape(-1)
        if bad:
            out[_every_1031()] *= 1.1
        row = {"outputs": [out.reshape(37, 1000).to(torch.bfloat16)], "reference": [ref],
               "native": [ref.to(torch.bfloat16)]}
        plan.append({"shape": {"M": 37, "N": 1000}, "distribution": "normal", "order": "candidate_first"})
        rows.append(row)
    rows[-1]["fresh"] = dict(rows[0])
    rows[-1]["fresh"]["reference"] = [rows[0]["reference"][0] * -1]
    rows[-1]["fresh"]["outputs"] = [(rows[0]["outputs"][0].double() * -1).to(torch.bfloat16)]
    return plan, rows


def test_check_trials_fails_a_fixed_set_with_its_positions_and_passes_rounding():
    spec = get_task("layernorm_bf16")
    plan, rows = _synthetic(bad=True)
    v = _verdict()
    assert not checks.check_trials(spec, plan, rows, v, "cpu")
    assert v.stage is Stage.INCORRECT and all(t["ok"] for t in v.trials)
    first = re.search(r"the same positions are wrong in every trial, e.g. flat indices (\d+) \((\d+), (\d+)\)",
                      v.error)
    assert first is not None, v.error
    flat, row, column = (int(x) for x in first.groups())
    assert flat % 1031 == 1030 and (row, column) == divmod(flat, 1000)
    assert "in at least two of 4 calls on different inputs" in v.error
    assert "of output 0 at shape {'M': 37, 'N': 1000}" in v.error
    plan, rows = _synthetic(bad=False)
    assert checks.check_trials(spec, plan, rows, _verdict(), "cpu")


def _load(name: str):
    path = HACKS / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"recurring_{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _rows(spec, module, plan: list[dict]) -> list[dict]:
    """The candidate's outputs on each planned trial (and its fresh call), with the parent's
    references, as ``check_trials`` reads them."""
    task, rows = task_module(spec), []
    for t in plan:
        ref, inputs = references.build(spec, t["shape"], t["distribution"], t["seed"], "cpu", t.get("layout"))
        new = module.ModelNew(*task.get_init_inputs(**t["shape"]))
        new.load_state_dict(ref.state_dict(), strict=False)
        got = references.trial_references(spec, t, "cpu")
        with torch.no_grad():
            row = {"outputs": references.as_list(new(*inputs)), "reference": got.reference, "native": got.native}
            if t.get("rerun"):
                row["rerun"] = references.as_list(new(*inputs))
                fresh = make_inputs(task, t["shape"], t["distribution"], fresh_seed(t["seed"]), "cpu", t.get("layout"))
                row["fresh"] = {"outputs": references.as_list(new(*fresh)), "reference": got.fresh_reference,
                                "native": got.fresh_native}
        rows.append(row)
    return rows


@pytest.mark.parametrize("name, task", [("h28_layernorm_fixed_random_indices", "layernorm_bf16"),
                                        ("h28_gemm_fixed_indices", "gemm_bf16")])
def test_a_kernel_wrong_at_fixed_positions_passes_each_trial_and_fails_the_verdict(name, task):
    install_interpreter_fixes()
    spec = get_task(task)
    plan = plan_trials(spec, "cpu", 0)
    rows = _rows(spec, _load(name), plan)
    v = _verdict()
    assert not checks.check_trials(spec, plan, rows, v, "cpu")
    assert len(v.trials) == len(plan) and all(t["ok"] for t in v.trials), v.trials
    assert v.stage is Stage.INCORRECT and "the same positions are wrong in every trial" in v.error, v.error
