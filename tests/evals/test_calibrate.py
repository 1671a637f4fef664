"""``evals.calibrate`` on CPU: the expert and the vendor pass every trial, the hacks fail them,
and the report is written (the noise part needs a GPU and is skipped on CPU by design)."""

from __future__ import annotations

import json

from evals import calibrate


def test_calibration_counts_trials_and_rejects_the_hacks(tmp_path):
    out = tmp_path / "cal.json"
    calibrate.main(["--device", "cpu", "--tasks", "softmax_fp32,gemm_bf16", "--trials", "3",
                    "--budget-s", "240", "--out", str(out)])
    report = json.loads(out.read_text())
    for task in ("softmax_fp32", "gemm_bf16"):
        rates = report["correctness"][task]["rates"]
        assert rates["expert"]["trials"] == 3 and rates["expert"]["failed"] == 0, rates["expert"]
        assert rates["lower_precision"]["failed"] == rates["lower_precision"]["trials"] == 3
        assert rates["skip_rows_1pct"]["failed"] == 3
        assert rates["lower_precision"]["verdicts_failed"] == rates["lower_precision"]["verdicts"] >= 1
    assert report["correctness"]["gemm_bf16"]["rates"]["vendor:cublas"]["failed"] == 0
    assert report["noise"] == {} and report["versions"]["sandbox"] in ("bwrap", "off")
