"""KernelBench's protocol judged beside ours (``EvalConfig(protocol="kernelbench")``,
``hawkeye_env/judge/parent/decide/kernelbench_protocol.py``): its five trials on the file's own ``get_inputs``
and default initialisation, ``torch.allclose`` at the configured tolerance against the native
reference, reported in ``verdict.protocols`` and never in the reward. Candidates run in the real
judge on CPU (Triton interpreter)."""

from __future__ import annotations

import json
import math

import pytest
import torch
from typer.testing import CliRunner

from evals.kernelbench_eval import judge_level, render
from hawkeye_env.cli import app
from hawkeye_env.judge.parent.decide import kernelbench_protocol as kb
from hawkeye_env.judge.parent.decide.references import build, native_reference
from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator, evaluate_many
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.parent.trial_plan import plan_trials
from hawkeye_env.judge.shared.inputs import NATIVE, make_inputs
from hawkeye_env.judge.shared.verdict import Stage, Verdict
from hawkeye_env.tasks import registry
from tests.kernelbench.conftest import HERE, SOLUTIONS

CANDIDATES = HERE / "protocol_candidates"
FILES = {
    "honest_relu": SOLUTIONS / "level_1_problem_1_sample_0_kernel.py",
    "relu_off_5e-3": CANDIDATES / "level_1_problem_1_off_by_5e-3.py",
    "honest_layernorm": SOLUTIONS / "level_1_problem_8_sample_0_kernel.py",
    "layernorm_default_affine": CANDIDATES / "level_1_problem_8_default_affine.py",
    "layernorm_wrong_at_default_init": CANDIDATES / "level_1_problem_8_wrong_at_default_init.py",
}
PROBLEM = {"honest_relu": 1, "relu_off_5e-3": 1, "honest_layernorm": 8, "layernorm_default_affine": 8,
           "layernorm_wrong_at_default_init": 8}
CONFIGS = {
    "hawkeye": EvalConfig(seed=0),
    "kernelbench": EvalConfig(seed=0, protocol="kernelbench"),
    "kernelbench_1e-4": EvalConfig(seed=0, protocol="kernelbench", kernelbench_atol=kb.STRICT_TOLERANCE,
                                   kernelbench_rtol=kb.STRICT_TOLERANCE),
}


def _task_id(imported, number: int) -> str:
    return imported[1].by_number[(1, number)]


@pytest.fixture(scope="module")
def verdicts(imported) -> dict[str, dict[str, Verdict]]:
    """config name -> candidate name -> verdict, every candidate judged under every config."""
    jobs = [(_task_id(imported, PROBLEM[name]), path.read_text()) for name, path in FILES.items()]
    out = {}
    for config_name, config in CONFIGS.items():
        got = evaluate_many(Evaluator(ResultStore(":memory:"), config), jobs, "cpu", workers=2, use_cache=False)
        out[config_name] = dict(zip(FILES, got))
    return out


def test_the_plan_appends_five_native_trials_marked_with_the_protocol(imported):
    spec = registry.get_task(_task_id(imported, 2))
    own = plan_trials(spec, "cpu", 11)
    both = plan_trials(spec, "cpu", 11, "kernelbench")
    assert both[:len(own)] == own and sum(bool(t.get("rerun")) for t in both) == 1
    added = both[len(own):]
    assert len(added) == kb.TRIALS == 5
    assert all(t["protocol"] == "kernelbench" and t["distribution"] == NATIVE for t in added)
    assert all(t["shape"] == dict(spec.cpu_shapes[0]) for t in added)
    assert len({t["seed"] for t in both}) == len(both)
    assert all(t["shape"] == dict(spec.gpu_shapes[0]) for t in kb.plan(spec, "cuda", 11))
    with pytest.raises(ValueError, match="unknown protocol"):
        plan_trials(spec, "cpu", 11, "kernelbnech")


def test_native_trials_use_the_files_own_inputs_and_default_init(imported):
    """Upper-triangular inputs as ``get_inputs`` draws them under the seed; LayerNorm's default
    weight 1 and bias 0 kept, where hawkeye's trials jitter them."""
    spec = registry.get_task(_task_id(imported, 2))
    module = registry.task_module(spec)
    shape = dict(spec.cpu_shapes[0])
    a, b = make_inputs(module, shape, NATIVE, 5, "cpu")
    torch.manual_seed(5)
    expected = module.get_inputs(**shape)
    assert torch.equal(a, expected[0]) and torch.equal(b, expected[1]) and torch.equal(a, a.triu())
    assert not torch.equal(a, make_inputs(module, shape, NATIVE, 6, "cpu")[0])
    spec = registry.get_task(_task_id(imported, 8))
    native, _ = build(spec, dict(spec.cpu_shapes[0]), NATIVE, 5, "cpu")
    jittered, _ = build(spec, dict(spec.cpu_shapes[0]), "normal", 5, "cpu")
    assert bool((native.ln.weight == 1).all()) and bool((native.ln.bias == 0).all())
    assert not bool((jittered.ln.weight == 1).all())


def test_allclose_failure_follows_torch_allclose():
    ref = torch.ones(3)
    assert kb.allclose_failure([ref * (1 + 5e-3)], [ref], 1e-2, 1e-2) == ("", pytest.approx(5e-3, rel=1e-3))
    assert kb.allclose_failure([ref * (1 + 5e-3)], [ref], 1e-4, 1e-4)[0].startswith("Output mismatch")
    assert "shape mismatch" in kb.allclose_failure([torch.ones(4)], [ref], 1e-2, 1e-2)[0]
    assert "float64" in kb.allclose_failure([ref.double()], [ref], 1e-2, 1e-2)[0]
    why, diff = kb.allclose_failure([torch.full((3,), math.nan)], [torch.full((3,), math.nan)], 1e-2, 1e-2)
    assert why.startswith("Output mismatch") and math.isnan(diff)
    assert "2 outputs" in kb.allclose_failure([ref, ref], [ref], 1e-2, 1e-2)[0]


def test_judging_strips_the_protocols_rows_and_reports_the_mean_of_its_back_to_back_times(imported):
    """The parent's side alone, on a reply whose outputs are the native references themselves and
    whose timing is a stand-in for the GPU's: the judge's own samples at 100 ms, KernelBench's 100
    back-to-back times at 1 ms (``back_to_back.py``)."""
    spec = registry.get_task(_task_id(imported, 2))
    job = {"trials": plan_trials(spec, "cpu", 3, "kernelbench"), "timing": {"seed": 1}}
    rows = [{"outputs": native_reference(*build(spec, t["shape"], t["distribution"], t["seed"], "cpu"))}
            for t in job["trials"]]
    timing = {"candidate": {"event_ms": [100.0] * 20, "kernelbench_ms": [1.0] * kb.TIMED_TRIALS}}
    v = Verdict(task=spec.id, device="cpu", stage=Stage.CORRECT)
    own_job, own_reply = kb.judge_and_strip(spec, job, {"trials": rows, "timing": timing}, "cpu", v, 1e-2, 1e-2)
    assert len(own_job["trials"]) == len(own_reply["trials"]) == len(job["trials"]) - 5
    assert all("protocol" not in t for t in own_job["trials"]) and own_job["timing"] == job["timing"]
    assert v.protocols["kernelbench"]["correct"] and v.protocols["kernelbench"]["mean_ms"] == 1.0
    rows[-1] = {"outputs": [rows[-1]["outputs"][0] + 1.0]}
    v = Verdict(task=spec.id, device="cpu", stage=Stage.CORRECT)
    kb.judge_and_strip(spec, job, {"trials": rows, "timing": timing}, "cpu", v, 1e-2, 1e-2)
    assert v.protocols["kernelbench"]["failed"] == 1 and v.protocols["kernelbench"]["mean_ms"] is None
    assert kb.mean_ms(None) is None and kb.mean_ms({"candidate": {}}) is None


def test_the_default_protocol_keeps_its_store_key_and_an_unknown_one_is_refused():
    assert set(EvalConfig().key()) == set(EvalConfig(kernelbench_atol=1e-4).key())
    assert "protocol" not in EvalConfig().key()
    assert EvalConfig(protocol="kernelbench").key() != EvalConfig(protocol="kernelbench", kernelbench_atol=1e-4).key()
    with pytest.raises(ValueError, match="unknown protocol"):
        EvalConfig(protocol="torchbench")


def test_an_honest_candidate_is_correct_under_both_protocols(verdicts):
    for name in ("honest_relu", "honest_layernorm"):
        ours, both = verdicts["hawkeye"][name], verdicts["kernelbench"][name]
        assert ours.stage == Stage.CORRECT and ours.protocols == {}
        assert both.stage == Stage.CORRECT
        outcome = both.protocols["kernelbench"]
        assert outcome["correct"] and outcome["trials"] == 5 and outcome["failed"] == 0
        assert outcome["mean_ms"] is None  # CPU: nothing is timed
        assert (outcome["atol"], outcome["rtol"]) == (1e-2, 1e-2)


def test_an_output_off_by_5e_3_passes_1e_2_and_fails_1e_4(verdicts):
    loose = verdicts["kernelbench"]["relu_off_5e-3"].protocols["kernelbench"]
    strict = verdicts["kernelbench_1e-4"]["relu_off_5e-3"].protocols["kernelbench"]
    assert loose["correct"] and (loose["atol"], loose["rtol"]) == (1e-2, 1e-2)
    assert not strict["correct"] and strict["failed"] == 5 and "Output mismatch" in strict["reason"]
    assert (strict["atol"], strict["rtol"]) == (1e-4, 1e-4)
    assert verdicts["kernelbench"]["relu_off_5e-3"].stage == Stage.INCORRECT  # our float32 bounds


def test_the_two_protocols_disagree_on_default_initialisation(verdicts):
    """Right only at the default init: KernelBench passes it, we do not. Wrong only at the
    default init: we pass it, KernelBench does not."""
    only_default = verdicts["kernelbench"]["layernorm_default_affine"]
    assert only_default.stage == Stage.INCORRECT and only_default.protocols["kernelbench"]["correct"]
    wrong_default = verdicts["kernelbench"]["layernorm_wrong_at_default_init"]
    outcome = wrong_default.protocols["kernelbench"]
    assert wrong_default.stage == Stage.CORRECT and not outcome["correct"] and outcome["failed"] == 5


def _raising_after(source: str, own: int) -> str:
    """``source`` (a right ``ModelNew``) made to raise in every model after the first ``own`` its
    process builds. The worker builds one model per trial, the verdict's own trials first and
    KernelBench's five after them (``plan.plan_trials``): with ``own`` our trial count it raises
    in each of KernelBench's trials and in none of ours."""
    init, forward = "        super().__init__()\n", "    def forward(self, x):\n"
    raising = source.replace("class ModelNew(nn.Module):", "BUILT = []\n\n\nclass ModelNew(nn.Module):", 1)
    raising = raising.replace(init, init + "        BUILT.append(1)\n", 1)
    check = f"        if len(BUILT) > {own}:\n            raise RuntimeError(\"no kernel for this model\")\n"
    raising = raising.replace(forward, forward + check, 1)
    assert raising.count("BUILT") == 3, "the honest LayerNorm changed: update _raising_after"
    return raising


def test_a_raise_in_the_protocols_trials_fails_the_protocol_not_the_verdict(imported, monkeypatch):
    """Raising only in KernelBench's trials: the verdict and the reward are ours, and each of
    KernelBench's five trials fails with the raise, as KernelBench counts it. The candidate counts
    the models its own process builds, so its calls are the judged ones here (replay off)."""
    monkeypatch.setenv("HAWKEYE_REPLAY", "off")
    task = _task_id(imported, 8)
    own = len(plan_trials(registry.get_task(task), "cpu", 0))
    source = _raising_after(FILES["honest_layernorm"].read_text(), own)
    got = {name: Evaluator(ResultStore(":memory:"), CONFIGS[name]).evaluate(task, source, "cpu", use_cache=False)
           for name in ("hawkeye", "kernelbench")}
    assert got["hawkeye"].stage == got["kernelbench"].stage == Stage.CORRECT, got["kernelbench"].error
    assert got["kernelbench"].reward == got["hawkeye"].reward
    outcome = got["kernelbench"].protocols["kernelbench"]
    assert not outcome["correct"] and outcome["failed"] == 5 and outcome["mean_ms"] is None
    assert "raised RuntimeError: no kernel for this model" in outcome["reason"]


def test_the_protocol_never_changes_the_verdict_or_the_reward(verdicts):
    for name in FILES:
        ours, both = verdicts["hawkeye"][name], verdicts["kernelbench"][name]
        fields = ("reward", "stage", "correct", "error")
        assert [getattr(both, f) for f in fields] == [getattr(ours, f) for f in fields]
        assert both.trials == ours.trials  # the protocol's trials are not among ours
        assert [v.code for v in both.violations] == [v.code for v in ours.violations]


def test_the_verdict_round_trips_through_the_store_with_its_protocols(imported, tmp_path):
    task = _task_id(imported, 8)
    source = FILES["layernorm_wrong_at_default_init"].read_text()
    store = ResultStore(tmp_path / "results.sqlite3")
    first = Evaluator(store, CONFIGS["kernelbench"]).evaluate(task, source, "cpu")
    again = Evaluator(ResultStore(tmp_path / "results.sqlite3"), CONFIGS["kernelbench"]).evaluate(task, source, "cpu")
    assert not first.cached and again.cached
    assert again.protocols == first.protocols and not again.protocols["kernelbench"]["correct"]
    assert Verdict.from_dict(json.loads(first.to_json())).protocols == first.protocols
    hit = store.get_verdict(task, first.source_hash, "cpu", first.versions, EvalConfig().key())
    assert hit is None  # a hawkeye-protocol judge is never served the other protocol's verdict


def test_a_candidate_that_never_ran_is_incorrect_under_the_protocol(imported):
    judge = Evaluator(ResultStore(":memory:"), CONFIGS["kernelbench"])
    v = judge.evaluate(_task_id(imported, 1), "print('no model here')\n", "cpu", use_cache=False)
    outcome = v.protocols["kernelbench"]
    assert v.stage == Stage.NO_SOURCE and not outcome["correct"] and outcome["failed"] == 5
    assert "no_source" in outcome["reason"]


def test_the_scorer_fills_its_kernelbench_column_from_the_protocol(imported, tmp_path):
    out, _ = imported
    solutions = tmp_path / "solutions"
    solutions.mkdir()
    (solutions / "level_1_problem_1_sample_0_kernel.py").write_text(FILES["honest_relu"].read_text())
    (solutions / "level_1_problem_8_sample_0_kernel.py").write_text(FILES["layernorm_default_affine"].read_text())
    result = judge_level(out, 1, solutions, "cpu", store=tmp_path / "results.sqlite3")
    n = result["columns"]["hawkeye verdicts"]["n"]
    assert result["columns"]["hawkeye verdicts"]["fast_p"][0.0] == pytest.approx(1 / n)
    assert result["columns"]["KernelBench protocol"]["fast_p"][0.0] == pytest.approx(2 / n)
    assert "KernelBench eval_results" not in result["columns"]
    assert "| KernelBench protocol |" in render(result)


def test_check_takes_the_protocol_on_any_task(imported, tmp_path):
    store = ["--store", str(tmp_path / "results.sqlite3"), "--device", "cpu"]
    runner = CliRunner()
    text = runner.invoke(app, ["check", _task_id(imported, 1), str(FILES["relu_off_5e-3"]), "--protocol",
                               "kernelbench", *store])
    assert text.exit_code == 0, text.output
    assert "kernelbench protocol (allclose atol 0.01, rtol 0.01, 5 trials): correct" in text.stdout
    shipped = runner.invoke(app, ["check", "vector_add_fp32", "--json", "--protocol", "kernelbench", *store])
    assert shipped.exit_code == 0, shipped.output
    assert json.loads(shipped.stdout)["protocols"]["kernelbench"]["correct"] is True
    wrong = runner.invoke(app, ["check", "vector_add_fp32", "--protocol", "torchbench", *store])
    assert wrong.exit_code == 2 and "unknown protocol" in wrong.output


def test_a_thread_left_behind_by_a_raising_protocol_trial_is_still_caught(imported, monkeypatch):
    """A raise skips the checks after the call; a candidate that starts a thread and then raises in
    KernelBench's trials must still be caught, since the thread would outlive the trial (its own
    calls judged: replay off)."""
    monkeypatch.setenv("HAWKEYE_REPLAY", "off")
    task = _task_id(imported, 8)
    own = len(plan_trials(registry.get_task(task), "cpu", 0))
    source = _raising_after(FILES["honest_layernorm"].read_text(), own)
    raising = "            raise RuntimeError(\"no kernel for this model\")\n"
    thread = ("            __import__('threading').Thread(target=__import__('time').sleep, args=(30,),"
              " daemon=True).start()\n")
    source = source.replace(raising, thread + raising, 1)
    config = EvalConfig(seed=0, protocol="kernelbench", static_checks=False)  # the threading import is static-banned
    v = Evaluator(ResultStore(":memory:"), config).evaluate(task, source, "cpu", use_cache=False)
    assert v.stage == Stage.REJECTED and "threads_spawned" in [x.code for x in v.violations], (v.stage, v.error)
