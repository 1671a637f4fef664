"""``bench.recheck_trials`` on CPU: one trial re-judged, the expert passing and every hack failing,
with both worst-element ratios reported."""

from __future__ import annotations

import json

import pytest

from bench import recheck_trials
from evals.provenance import git_commit


def test_a_trial_is_rejudged_with_both_ratios(tmp_path):
    out = tmp_path / "rc.json"
    recheck_trials.main(["softmax_fp32:heavy_tailed:7", "--device", "cpu", "--out", str(out)])
    report = json.loads(out.read_text())
    rows = report["trials"]["softmax_fp32"]["rows"]
    assert rows["expert"]["ok"] and rows["expert"]["global_cap_over"] < 1
    for hack in ("lower_precision", "skip_rows_1pct", "skip_elements_0.1pct"):
        assert not rows[hack]["ok"], hack
    # the row scale is never below the output's RMS, so its ratio is never above the global one
    for row in rows.values():
        assert row["row_cap_over"] <= row["global_cap_over"] + 1e-12
    command = "python -m bench.recheck_trials softmax_fp32:heavy_tailed:7 --device cpu --out " + str(out)
    assert report["command"] == command  # bench.provenance, with the judge's versions beside it
    assert report["gpu"] == "cpu" and report["driver"] == "" and report["versions"]["sandbox"]
    assert report["commit"] == git_commit()


def test_a_malformed_trial_is_refused():
    with pytest.raises(SystemExit):
        recheck_trials.main(["softmax_fp32:7"])
