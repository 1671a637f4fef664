"""``bench.calibrate`` on CPU: the expert and the vendor pass every trial, the hacks fail them,
and the report is written (the noise part needs a GPU and is skipped on CPU by design)."""

from __future__ import annotations

import json

from bench import calibrate


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


def test_parts_of_a_calibration_merge_into_one_report(tmp_path):
    """A calibration split over several GPU calls becomes one report: every part's tasks, the
    later part winning for a task in both unless it skipped the task (entries without counts),
    each part's args kept."""
    parts = []
    for i, (correct, noisy) in enumerate([({"a": {"trials": 1}}, {"c": {"1": {}}}),
                                          ({"a": {"trials": 2}, "b": {}}, {"c": {"skipped": "budget"}, "d": {}})]):
        path = tmp_path / f"part{i}.json"
        path.write_text(json.dumps({"date": f"2026-12-0{i + 1}", "device": "cuda", "versions": {"judge": str(i)},
                                    "args": {"tasks": str(i)}, "correctness": correct, "noise": noisy,
                                    "commit": ["c0", ""][i], "wall_s": 10.0 * (i + 1)}))
        parts.append(str(path))
    out = tmp_path / "merged.json"
    calibrate.main(["--merge", *parts, "--out", str(out)])
    merged = json.loads(out.read_text())
    assert merged["correctness"] == {"a": {"trials": 2}, "b": {}} and merged["noise"] == {"c": {"1": {}}, "d": {}}
    assert [p["args"]["tasks"] for p in merged["parts"]] == ["0", "1"]
    assert merged["date"] == "2026-12-02" and merged["wall_s"] == 30.0
    assert merged["versions"] == {"judge": "0, 1"}  # parts of two judges say so
    assert merged["commit"] == "c0" and [p["commit"] for p in merged["parts"]] == ["c0", ""]  # none made up


def test_a_merge_of_merges_names_every_judge_once(tmp_path):
    """Versions the parts share stay single; a merge of a merge keeps its parts' versions."""
    def part(name, judge):
        path = tmp_path / name
        path.write_text(json.dumps({"date": "2026-12-02", "device": "cuda", "args": {}, "correctness": {},
                                    "noise": {}, "versions": {"judge": judge, "gpu": "H200"}}))
        return str(path)

    first = tmp_path / "first.json"
    calibrate.main(["--merge", part("a.json", "j1"), part("b.json", "j2"), "--out", str(first)])
    out = tmp_path / "out.json"
    calibrate.main(["--merge", str(first), part("c.json", "j1"), "--out", str(out)])
    assert json.loads(out.read_text())["versions"] == {"judge": "j1, j2", "gpu": "H200"}


def test_parts_on_distinct_seeds_add_their_trials(tmp_path):
    """The same task calibrated in two parts (side by side or in two GPU calls, each its own seed)
    counts every trial of both; an errored part does not wipe the counts."""
    def part(i, seed, trials, failed, errored=False):
        entry = {"error": "Traceback"} if errored else {
            "trials": trials, "seed": seed, "wall_s": 5.0,
            "rates": {"expert": {"trials": trials, "failed": failed, "verdicts": trials // 5,
                                 "verdicts_failed": int(failed > 0), "failures": [{"seed": seed}] * failed}}}
        path = tmp_path / f"p{i}.json"
        path.write_text(json.dumps({"date": "2026-12-01", "device": "cuda", "versions": {}, "args": {"seed": seed},
                                    "correctness": {"t": entry}, "noise": {}, "wall_s": 1.0}))
        return str(path)

    out = tmp_path / "m.json"
    calibrate.main(["--merge", part(0, 1, 100, 0), part(1, 2, 60, 3), part(2, 3, 0, 0, errored=True),
                    "--out", str(out)])
    t = json.loads(out.read_text())["correctness"]["t"]
    assert t["trials"] == 160 and t["seeds"] == [1, 2]
    assert t["rates"]["expert"]["trials"] == 160 and t["rates"]["expert"]["failed"] == 3
    assert t["rates"]["expert"]["verdicts"] == 32 and t["rates"]["expert"]["verdicts_failed"] == 1
    assert len(t["rates"]["expert"]["failures"]) == 3
    again = tmp_path / "again.json"  # a merge merged again lists the runs behind it, not itself
    calibrate.main(["--merge", str(out), part(3, 4, 10, 0), "--out", str(again)])
    merged = json.loads(again.read_text())
    assert [p["args"]["seed"] for p in merged["parts"]] == [1, 2, 3, 4]
    assert merged["correctness"]["t"]["trials"] == 170


def test_profile_medians_skip_stages_a_verdict_lacks():
    from hawkeye_env.judge.shared.verdict import Stage, Verdict

    vs = [Verdict(task="t", device="cuda", stage=Stage.CORRECT) for _ in range(3)]
    for v, p in zip(vs, [{"worker_wall_s": 1.0, "replay_wall_s": 4.0}, {"worker_wall_s": 3.0}, {"worker_wall_s": 2.0}]):
        v.profile = p
    assert calibrate.profile_medians(vs) == {"worker_wall_s": 2.0, "replay_wall_s": 4.0}
