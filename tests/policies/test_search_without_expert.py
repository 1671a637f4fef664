"""The search policy on generated tasks, which ship no expert solution: unit seeds composed on the
reference ``Model``'s ``__init__`` where one computes the task, else a policy-failure record that the
eval reports as ``policy_error`` rows (nothing judged, no reward) instead of an exception."""

from __future__ import annotations

import ast
import json

from hawkeye_env.edits import extract_source
from hawkeye_env.tasks.registry import get_task
from policies.search import NO_SEED, SearchPolicy, task_seeds

DECODE = "g3_00003_attn_decode_bf16"  # units/ws_attention_fwd fits its forward and computes it
ELEMENTWISE = "g3_00000_ew_mish_clamp_sigmoid_bf16"  # no unit's solution fits: nothing to search from


def _obs(task: str, trajectory: int = 0) -> dict:
    return {"task_id": task, "prompt": "", "source": "", "feedback": "", "turn": 0, "trajectory": trajectory}


def test_a_task_without_an_expert_searches_from_unit_seeds_on_its_reference(generated_splits):
    assert get_task(DECODE).solution is None
    [seed] = task_seeds(DECODE)
    assert "a ModelNew with the reference's init" in seed and "units/ws_attention_fwd" in seed
    tree = ast.parse(seed)
    assert any(isinstance(n, ast.ClassDef) and n.name == "ModelNew" for n in tree.body)
    policy = SearchPolicy(seed=0)
    [replies] = policy.sample([_obs(DECODE)], n=3)
    assert extract_source(replies[0]) == extract_source(f"```python\n{seed.rstrip()}\n```\n")
    assert all("class ModelNew" in extract_source(r) for r in replies) and policy.errors == []


def test_a_task_with_nothing_to_search_from_is_a_policy_failure(generated_splits):
    assert task_seeds(ELEMENTWISE) == []
    policy = SearchPolicy(seed=0)
    replies = policy.sample([_obs(ELEMENTWISE, trajectory=2), _obs(DECODE)], n=2)
    assert replies[0] == ["", ""] and all(replies[1])
    [record] = policy.errors
    assert record["error"].startswith(NO_SEED) and ELEMENTWISE in record["error"]
    assert {k: record[k] for k in ("task_id", "trajectory", "turn", "missing")} == {
        "task_id": ELEMENTWISE, "trajectory": 2, "turn": 0, "missing": 2}


def test_the_eval_records_the_failure_and_judges_nothing(generated_splits, tmp_path):
    from evals.best_of_n import run_eval

    results = run_eval(SearchPolicy(seed=0), [ELEMENTWISE], n=2, out_dir=tmp_path / "eval", device="cpu",
                       store=tmp_path / "verdicts.sqlite3", wandb_mode="disabled", progress=False)
    assert [e["task_id"] for e in results["policy_errors"]] == [ELEMENTWISE]
    assert results["error"].startswith("the policy failed 1 time(s); first: " + NO_SEED)
    rows = [json.loads(line) for line in (tmp_path / "eval" / "candidates.jsonl").read_text().splitlines()]
    assert [r["stage"] for r in rows] == ["policy_error", "policy_error"] and all(r["reward"] is None for r in rows)
    assert results["tasks"][ELEMENTWISE]["policy_failures"] == 2 and results["tasks"][ELEMENTWISE]["obtained"] == 0
