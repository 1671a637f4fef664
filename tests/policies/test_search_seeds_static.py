"""Every seed the search policy composes (expert solutions and unit seeds) passes the judge's static
rules: a unit kernel the environment teaches must not be rejected once an agent splices it in."""

from __future__ import annotations

import pytest

from hawkeye_env.judge.parent.static.rules import check_source
from hawkeye_env.tasks.registry import list_tasks
from policies.search import task_seeds


@pytest.mark.parametrize("task", [s.id for s in list_tasks()])
def test_every_seed_passes_the_static_rules(task):
    seeds = task_seeds(task)
    assert seeds, f"{task}: no seed"
    for i, source in enumerate(seeds):
        findings = check_source(source)
        assert not findings, f"{task} seed {i}: " + "; ".join(f"line {f.line}: {f.message}" for f in findings)
