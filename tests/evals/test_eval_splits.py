"""``run_eval`` and ``run_by_task`` take a split as the env does (``select_tasks``): the results hold
exactly that split's tasks, and an unknown split is refused before anything runs. The policy replies
nothing (``no_source``), so nothing is judged."""

from __future__ import annotations

import pytest

from evals.best_of_n import run_eval
from evals.by_task import run_by_task


class _Silent:
    name = "silent"
    seed = 0

    def sample(self, observations, n):
        return [[""] * n for _ in observations]


def _ids(splits: dict[str, str], name: str) -> list[str]:
    return sorted(i for i, s in splits.items() if s == name)


def test_an_eval_of_a_split_covers_that_split_alone(generated_splits, tmp_path):
    common = {"n": 1, "device": "cpu", "store": tmp_path / "v.sqlite3", "wandb_mode": "disabled", "progress": False}
    results = run_eval(_Silent(), "split:validation", out_dir=tmp_path / "one", **common)
    assert sorted(results["tasks"]) == _ids(generated_splits, "validation")
    with pytest.raises(KeyError, match="unknown split 'holdout'"):
        run_eval(_Silent(), "split:holdout", out_dir=tmp_path / "bad", **common)
    with pytest.raises(KeyError, match="unknown split 'holdout'"):
        run_by_task(_Silent(), ["split:train", "split:holdout"], tmp_path / "by_task", **common)
    assert not (tmp_path / "bad").exists() and not (tmp_path / "by_task").exists()  # refused before any run
