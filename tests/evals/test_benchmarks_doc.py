"""BENCHMARKS.md is what ``python -m bench.benchmarks_doc`` renders from ``bench/results/`` and the
template, every results file it names exists and every file under ``bench/results/`` is read by an
area; and the results schemas that new files arrive in (``bench.calibrate``,
``bench.throughput``, ``bench.tasks``) render."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from bench import benchmarks_doc
from bench.benchmarks_doc import AREAS, REPO, RESULTS, Area, render_area, results_files


def test_benchmarks_md_is_up_to_date():
    assert benchmarks_doc.main(["--check"]) == 0, "run python -m bench.benchmarks_doc"


def test_every_results_file_the_generator_names_exists():
    missing = [str(p) for p in results_files() if not (REPO / p).exists()]
    assert not missing, missing


def stray_results(root, named) -> list[str]:
    """Files under ``root / RESULTS`` that are neither a named path nor inside a named folder."""
    named = set(named)
    found = (p.relative_to(root) for p in (root / RESULTS).rglob("*") if p.is_file())
    return sorted(str(p) for p in found if not ({p, *p.parents} & named))


def test_every_results_file_is_read_by_an_area():
    stray = stray_results(REPO, results_files())
    assert not stray, f"results no area reads (name them in AREAS or delete them): {stray}"


def test_a_results_file_no_area_reads_is_found(tmp_path):
    (tmp_path / RESULTS / "a").mkdir(parents=True)
    (tmp_path / RESULTS / "a" / "read.json").write_text("{}")
    (tmp_path / RESULTS / "a" / "stray.json").write_text("{}")
    (tmp_path / RESULTS / "run" / "plots").mkdir(parents=True)
    (tmp_path / RESULTS / "run" / "plots" / "p.png").write_text("")
    named = [RESULTS / "a" / "read.json", RESULTS / "run"]
    assert stray_results(tmp_path, named) == [str(RESULTS / "a" / "stray.json")]


def test_area_keys_are_unique_and_benchmarks_names_no_run():
    keys = [a.key for a in AREAS]
    assert len(keys) == len(set(keys))
    text = (REPO / "BENCHMARKS.md").read_text()
    assert not re.search(r"\b[Rr]uns? \d|\bruns?\d", text), "a run number in BENCHMARKS.md"


def test_check_reports_a_stale_document(tmp_path, monkeypatch, capsys):
    area = next(a for a in AREAS if a.key == "grpo")
    (tmp_path / RESULTS / "grpo").mkdir(parents=True)
    (tmp_path / benchmarks_doc.TEMPLATE).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / benchmarks_doc.TEMPLATE).write_text("# B\n\n{{table:grpo}}\n")
    for path in area.paths():
        shutil.copy(REPO / RESULTS / path, tmp_path / RESULTS / path)
    monkeypatch.setattr(benchmarks_doc, "REPO", tmp_path)
    monkeypatch.setattr(benchmarks_doc, "AREAS", (area,))
    assert benchmarks_doc.main([]) == 0
    assert benchmarks_doc.main(["--check"]) == 0
    (tmp_path / "BENCHMARKS.md").write_text("# B\n\nedited by hand\n")
    assert benchmarks_doc.main(["--check"]) == 1
    assert "out of date" in capsys.readouterr().err


def test_a_placeholder_without_an_area_is_refused(tmp_path):
    (tmp_path / benchmarks_doc.TEMPLATE).parent.mkdir(parents=True)
    (tmp_path / benchmarks_doc.TEMPLATE).write_text("{{table:nope}}\n")
    with pytest.raises(ValueError, match="nope"):
        benchmarks_doc.render(tmp_path, ())


def _area(tmp_path, render, name: str, data, **kw) -> list[str]:
    (tmp_path / RESULTS / "x").mkdir(parents=True, exist_ok=True)
    (tmp_path / RESULTS / "x" / name).write_text(json.dumps(data))
    return render_area(Area("x", render, (name,), **kw), root=tmp_path)


VERSIONS = {"gpu": "NVIDIA H200", "torch": "2.11.0+cu130", "triton": "3.6.0", "judge": "abc", "reward": "v2"}


def test_a_calibration_file_renders_with_its_command(tmp_path):
    from bench import tables as benchmark_tables

    rate = {"trials": 4, "failed": 0, "failures": [], "verdicts": 1, "verdicts_failed": 0}
    hack = {"trials": 4, "failed": 3, "failures": [], "verdicts": 1, "verdicts_failed": 1, "passed": 1}
    data = {
        "date": "2026-12-02", "device": "cuda", "versions": VERSIONS,
        "args": {"device": "cuda", "tasks": "gemm_bf16", "trials": 4, "verdicts": 3, "in_flight": [1, 4],
                 "noise_tasks": "gemm_bf16", "budget_s": 300.0, "skip": []},
        "correctness": {"gemm_bf16": {"trials": 4, "vendors_unavailable": {}, "rates": {
            "expert": rate, "vendor:cublas": rate, "lower_precision": hack, "skip_rows_1pct": hack,
            "skip_elements_0.1pct": hack}}},
        "noise": {"gemm_bf16": {"1": {"speedup": {"n": 3, "median": 0.92, "min": 0.91, "max": 0.93,
                                                  "max_over_min": 1.02, "best_over_median": 1.01},
                                      "candidate_ms": {"n": 3, "median": 0.2, "min": 0.19, "max": 0.21},
                                      "device_ms": {"n": 3, "median": 0.2, "min": 0.198, "max": 0.202,
                                                    "max_over_min": 1.0202, "best_over_median": 1.01},
                                      "host_launch_ms": {"n": 3, "median": 0.05, "min": 0.04, "max": 0.1,
                                                         "max_over_min": 2.5},
                                      "host_launch_median_ms": {"n": 3, "median": 0.06},
                                      "verdicts_per_min": 11.4}},
                  "fp8_gemm_per_tensor": {"skipped": "budget"}},
    }
    rates = "\n".join(_area(tmp_path, benchmark_tables.calibration_rates, "judge-calibration-h200-2026-12-02.json",
                            data))
    assert "python -m bench.calibrate --device cuda --tasks gemm_bf16 --trials 4" in rates
    assert "| gemm_bf16 | 4 | 0 / 4 (verdicts 0 / 1) | cublas 0 / 4 (verdicts 0 / 1) | 3 / 4 (verdicts 1 / 1)" in rates
    assert "NVIDIA H200, 2026-12-02" in rates
    noise = "\n".join(_area(tmp_path, benchmark_tables.calibration_noise, "judge-calibration-h200-2026-12-02.json",
                            data))
    assert ("| gemm_bf16 | 1 | 3 | 0.2000 (0.1980-0.2020) | 1.020 | 1.010 | 0.050 (0.040-0.100) | 2.50 | "
            "0.920 (0.910-0.930), 1.02 | 11.4 |") in noise
    assert "Not run (the call's time ran out): fp8_gemm_per_tensor." in noise


def test_a_later_calibration_file_replaces_a_tasks_row():
    from bench.tables import Loaded, calibration_rates

    def report(trials: int, failed: int) -> dict:
        rate = {"trials": trials, "failed": failed, "failures": []}
        return {"correctness": {"gemm_bf16": {"trials": trials, "rates": {"expert": rate}},
                                "softmax_fp32": {"trials": 9, "rates": {"expert": rate}}}}

    later = {"correctness": {"gemm_bf16": {"trials": 6, "rates": {"expert": {"trials": 6, "failed": 0}}}}}
    rows = calibration_rates([Loaded("r/old.json", report(100, 1)), Loaded("r/new.json", later)])
    gemm = [r for r in rows if r.startswith("| gemm_bf16 ")]
    assert len(gemm) == 1 and "| 6 | 0 / 6 |" in gemm[0] and gemm[0].endswith("| new.json |"), gemm
    assert any(r.startswith("| softmax_fp32 | 9 | 1 / 100 |") and r.endswith("| old.json |") for r in rows)


def test_the_runners_provenance_is_shown_and_nothing_is_made_up(tmp_path):
    """A file with ``bench.provenance`` keys shows its commit and command; a JSON-lines file takes
    them from its provenance row; a file without a commit shows none."""
    recorded = {"date": "2026-12-06", "gpu": "cpu", "driver": "", "commit": "a" * 40 + "+dirty",
                "versions": {"python": "3.11.7", "torch": "2.13.0+cpu", "triton": "3.9.0"},
                "command": "python -m bench.tasks --device cpu"}
    line = _area(tmp_path, lambda files: [], "tasks-cpu-2026-12-06.json", recorded)[0]
    assert line.startswith("*CPU, 2026-12-06; ") and "Commit `aaaaaaaaaaaa+dirty`." in line
    assert "Command: `python -m bench.tasks --device cpu`." in line
    rows = [{"kind": "provenance", **recorded, "gpu": "NVIDIA H100 80GB HBM3", "driver": "580.1"}, {"kind": "time"}]
    assert benchmarks_doc._recorded(rows)["gpu"] == "NVIDIA H100 80GB HBM3"
    assert benchmarks_doc._recorded(rows)["driver"] == "580.1"
    bare = _area(tmp_path, lambda files: [], "old-h200-2026-11-30.json", {"date": "2026-11-30"}, command="cmd")[0]
    assert bare == "*GPU not recorded, 2026-11-30. Command: `cmd`. Raw: `bench/results/x/old-h200-2026-11-30.json`.*"


def test_a_merged_calibration_names_every_part_and_the_merge(tmp_path):
    args = {"device": "cuda", "tasks": "gemm_bf16", "trials": 4, "verdicts": 3, "in_flight": [1, 4],
            "noise_tasks": "gemm_bf16", "budget_s": 300.0}
    data = {"date": "2026-12-02", "device": "cuda", "versions": VERSIONS, "args": {**args, "skip": ["noise"]},
            "correctness": {}, "noise": {},
            "parts": [{"file": "a.json", "args": {**args, "skip": ["noise"]}},
                      {"file": "b.json", "args": {**args, "skip": ["correctness"]}}]}
    recorded = benchmarks_doc._recorded(data)["command"]
    assert recorded.count("python -m bench.calibrate --device cuda") == 2
    assert recorded.endswith("python -m bench.calibrate --merge a.json b.json")


def test_a_throughput_file_renders(tmp_path):
    from bench import tables as benchmark_tables

    phase = {"candidates": 19, "wall_s": 50.0, "candidates_per_min": 22.8, "candidates_per_gpu_min": 22.8,
             "gemm_wall_s_median": 2.5, "unexpected": []}
    data = {"date": "2026-12-02", "versions": VERSIONS,
            "runs": {"1": {"cold": phase, "warm": phase, "gemm_alone": {"wall_s": [1.5, 1.6, 1.7]}},
                     "2": {"cold": {**phase, "candidates_per_min": 41.0}}},
            "summary": {"speedup": {"cold": 1.8}, "speedup_gpus": [1, 2]}}
    text = "\n".join(_area(tmp_path, benchmark_tables.throughput, "throughput-h200-2026-12-02.json", data,
                           command="python -m bench.throughput --device cuda"))
    assert "| 1 | gemm_bf16 alone x3 | - | - | - | - | 1.60 (1.50-1.70) | - |" in text
    assert "1 -> 2 GPUs, cold: 1.80x" in text
    assert "`python -m bench.throughput --device cuda`" in text


def test_a_task_suite_file_renders_through_bench_tasks(tmp_path):
    from bench import tables as benchmark_tables

    row = {"stage": "correct", "timed": True, "expert_ms": 0.25, "tflops": 550.0, "gbps": 400.0,
           "copy_fraction": 0.1, "speedup": {"cublas": 0.93}, "unavailable": {},
           "shape": {"M": 4096, "N": 4096, "K": 4096}, "baselines_ms": {"cublas": 0.2325, "eager": 1.0},
           "targets": {"cublas": {"target": 1.0, "measured": 0.93, "status": "missed"}}}
    data = {"date": "2026-12-02", "gpu": "NVIDIA H200", "driver": "580", "versions": VERSIONS,
            "copy_bandwidth": {"gbps": 4200.0}, "tasks": {"gemm_bf16": row}}
    text = "\n".join(_area(tmp_path, benchmark_tables.suite, "tasks-suite-a-h200-2026-12-02.json", data))
    # speed of light on the H200: 2 * 4096^3 FLOP at 989 TFLOP/s = 0.139 ms (the judge baselines get no share)
    row = ("| gemm_bf16 | correct | 1 | 0.2500 | - | 550.0 | 400 | 10% | expert 56%, cublas 60% | cublas 0.93x | "
           "cublas>=1.0: 0.93 missed |")
    assert row in text
    assert "4200 GB/s" in text
    listed = "Tasks without a row here, not yet measured on a GPU by `bench.tasks`: `vector_add_fp32`,"
    assert listed in text and "`gemm_bf16`," not in text


def test_a_kerneldev_run_record_names_its_gpu_date_and_software():
    data = {"env": {"torch": "2.11.0+cu130", "triton": "3.6.0", "cuda": "13.0", "device": "NVIDIA H200",
                    "date": "2026-12-01 15:48:48"}, "ws_gemm": {}}
    got = benchmarks_doc._recorded(data)
    assert got == {"gpu": "NVIDIA H200", "torch": "2.11.0+cu130", "triton": "3.6.0", "cuda": "13.0",
                   "date": "2026-12-01"}
    assert benchmarks_doc._recorded({"env": {"note": "no device"}}) == {}


def _repeats(n: int, lo: float, hi: float, speed: dict[str, tuple[float, float]]) -> dict:
    return {"n": n, "device_ms": {"min": lo, "max": hi, "median": lo, "max_over_min": hi / lo},
            "speedup": {k: {"min": a, "max": b, "median": a, "max_over_min": b / a} for k, (a, b) in speed.items()}}


def test_tasks_judged_in_several_runs_show_their_spread_over_all_runs():
    from bench.tables import Loaded, suite_across_runs

    first = {"tasks": {"gemm_bf16": {"repeats": _repeats(2, 1.00, 1.01, {"cublas": (0.90, 0.91), "eager": (1.0, 1.0)})},
                       "only_here": {"repeats": _repeats(2, 1.0, 1.0, {})}}}
    second = {"tasks": {"gemm_bf16": {"repeats": _repeats(3, 0.99, 1.00, {"cublas": (0.92, 0.93)})}}}
    table = suite_across_runs([Loaded("a.json", first), Loaded("b.json", second)])
    assert len(table) == 3  # header, rule, one task: a task of one run has no spread over runs
    # min over both runs 0.99, max 1.01; only the baseline both runs measured; cublas 0.93 / 0.90
    assert table[2] == "| gemm_bf16 | 2 + 3 | 0.9900-1.0100 | 1.020 | cublas 1.033 |"


def test_a_search_batch_report_renders_as_best_of_n_from_its_sandboxed_phase():
    from bench.tables import Loaded
    from bench.tables_product import best_of_n

    metrics = {"candidates": 2, "correct_rate": 0.5, "best_of_k_speedup": [0.8, 1.1],
               "best_speedup": {"best": 1.1, "compile": 1.1, "cublas": 0.95}}
    overall = {"candidates": 2, "compile_rate": 1.0, "correct_rate": 0.5, "violation_rate": 0.0,
               "best_of_k_speedup": [0.8, 1.1], "geomean_best_speedup": {}}
    report = {"phases": [{"mode": "off", "best_of_n": {"tasks": {}, "overall": {}}},
                         {"mode": "bwrap", "best_of_n": {"tasks": {"gemm_bf16": metrics}, "overall": overall}}]}
    text = "\n".join(best_of_n([Loaded("search.json", report)]))
    assert "k = 1, 2 |" in text  # the header names only the k the curves reach
    assert "| gemm_bf16 | 2 | 0.50 | 0.80, 1.10 | 1.10x | cublas 0.95x |" in text


def test_best_of_n_over_several_files_adds_a_line_over_every_task():
    from bench.tables import Loaded
    from bench.tables_product import best_of_n

    def report(tasks):
        overall = {"candidates": 2, "compile_rate": 1.0, "correct_rate": 1.0, "violation_rate": 0.0,
                   "geomean_best_speedup": {}}
        return {"phases": [{"mode": "bwrap", "best_of_n": {"tasks": tasks, "overall": overall}}]}

    a = {"gemm_bf16": {"candidates": 4, "correct_rate": 1.0, "best_of_k_speedup": [0.5, 0.8, 0.9, 2.0],
                       "best_speedup": {"best": 2.0}}}
    b = {"gla_fwd_bf16": {"candidates": 2, "correct_rate": 0.5, "best_of_k_speedup": [0.25, 0.5],
                          "best_speedup": {"best": 0.5}},
         "softmax_fp32": {"candidates": 2, "correct_rate": 0.0, "best_of_k_speedup": [], "best_speedup": {}}}
    text = "\n".join(best_of_n([Loaded("a.json", report(a)), Loaded("b.json", report(b))]))
    assert "`b.json` (gla_fwd_bf16, softmax_fp32):" in text
    # k up to the shortest solved curve (2); an unsolved task counts 0: (0.5 + 0.25 + 0) / 3, (0.8 + 0.5) / 3
    assert "All 3 tasks: best-of-k speedup over each task's fastest baseline, averaged over the tasks, k = 1, 2: " \
           "0.25, 0.43; the best candidate's geomean 1.00x over 2 solved tasks; more than 1.03x the fastest baseline " \
           "on 1 (gemm_bf16)." in text


def test_a_gpu_test_log_cut_by_its_time_limit_says_so():
    from bench.tables import Loaded, gpu_tests

    log = "t.py::test_a PASSED [ 50%]\nt.py::test_b pytest rc=124\n"
    lines = gpu_tests([Loaded("x.log", log)])
    assert "| `x.log` | 1 passed before its time limit | - | - |" in lines
    assert "`x.log`: the run hit its time limit after `t.py::test_a`; the tests after it did not finish in this " \
           "log." in lines


def test_a_later_profile_of_a_runner_replaces_its_earlier_kernels():
    """The FP8 expert was profiled as a Triton kernel, then rebuilt on a Gluon one: only the later
    file's kernel stands for it, with the tensor pipe's busy share the later file records, and
    runners the later file did not profile keep their rows."""
    from bench.kerneldev.tables import ncu_kernels
    from bench.tables import Loaded

    names = ("vendor-profile/ncu-vendor-h200-2026-12-01.txt", "vendor-profile/ncu-fp8-h200-2026-12-04.txt")
    files = [Loaded(f"{RESULTS}/{n}", (REPO / RESULTS / n).read_text()) for n in names]
    earlier = [r for r in ncu_kernels(files[:1]) if r.startswith("| fp8_gemm_per_tensor | expert")]
    assert earlier and "ws_gemm_kernel" not in earlier[0]
    rows = ncu_kernels(files)
    expert = [r for r in rows if r.startswith("| fp8_gemm_per_tensor | expert")]
    assert len(expert) == 1 and "ws_gemm_kernel" in expert[0], expert
    assert "| 89.7 |" in expert[0], expert  # sm__pipe_tensor_cycles_active, % of peak
    assert any(r.startswith("| attention_causal_bf16 | expert") for r in rows)
