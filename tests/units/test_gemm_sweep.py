"""``bench.kerneldev.sweeps.gemm`` on the CPU: every configuration it will time on the GPU computes the GEMM in
each task layout it is listed for (under the Triton interpreter, or on CUDA when present, with
NaN-poisoned allocations), its shapes are the tasks' GPU shapes, its rows add up, and it refuses
to run without CUDA."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
import torch

from bench.kerneldev.sweeps import gemm
from hawkeye_env.judge.parent.decide.correctness import compare
from hawkeye_env.tasks.registry import get_task, task_module
from hawkeye_env.tasks.spec import BF16
from units.lib.harness import poisoned_empty
from units.warp_specialization.kernel import CANDIDATES

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
# Partial row, column and K tiles for every tile in CONFIGS (256x128: 2 row tiles, 128x256: 2
# column tiles, 64-deep K: 3 steps), more tiles than the persistent kernels' CPU programs (3-4), and
# K, N multiples of 8 so the TMA kernels take these operands.
M, N, K = 260, 264, 136


def _layouts(cfg: dict) -> list[bool]:
    return [weight_nk for weight_nk in (False, True) if cfg in gemm.configs_for(weight_nk)]


@pytest.mark.parametrize("cfg", gemm.CONFIGS, ids=lambda c: json.dumps(c))
def test_every_gemm_sweep_configuration_is_correct(cfg):
    """Through the sweep's own ``runner``, in each layout the sweep times it in: ``a @ b`` with
    ``b [K, N]`` row-major, and the linear tasks' ``x @ w.t()`` with ``w [N, K]``."""
    assert _layouts(cfg), f"{cfg} runs at no task shape"
    for weight_nk in _layouts(cfg):
        a, w = gemm.operands(M, N, K, weight_nk, DEVICE)
        with poisoned_empty():
            out = gemm.runner(cfg, weight_nk)(a, w)
        ref = a.double() @ (w.double().t() if weight_nk else w.double())
        verdict = compare(out, ref, torch.bfloat16, BF16)
        assert verdict["ok"], f"{cfg} weight_nk={weight_nk}: {verdict['reason']}"


def test_gemm_sweep_shapes_are_the_tasks_gpu_shapes_and_layouts():
    for label, m, n, k, weight_nk in gemm.SHAPES:
        spec = get_task(label)
        assert list(spec.gpu_shapes) == [{"M": m, "N": n, "K": k}], label
        assert "cublas" in spec.vendor_baselines and spec.targets == {"cublas": 1.0}, label
        # The linear tasks' module holds w [N, K] (init inputs in_features=K, out_features=N).
        assert task_module(spec).get_init_inputs(M=m, N=n, K=k) == ([k, n] if weight_nk else []), label
    assert [s[0] for s in gemm.SHAPES] == ["gemm_bf16", "gemm_8192_bf16", "gemm_narrow_bf16",
                                           "linear_prefill_bf16", "linear_large_bf16"]


def test_gemm_sweep_configurations():
    """Distinct, 10-20 per layout, every kernel at both layouts' shapes (the in-place weight path
    ``tma_nk`` at the linear ones only, 2-4 tiles), the ws candidates known, and every tile inside
    the H200's 227 KiB of shared memory (ring, plus the TMA output box)."""
    assert len({json.dumps(c) for c in gemm.CONFIGS}) == len(gemm.CONFIGS)
    assert all(10 <= len(gemm.configs_for(nk)) + 2 <= 20 for nk in (False, True))  # + cuBLAS, expert
    assert {c["kernel"] for c in gemm.configs_for(False)} == {"grouped", "persistent", "tma", "ws"}
    assert {c["kernel"] for c in gemm.configs_for(True)} == {"grouped", "persistent", "tma", "tma_nk", "ws"}
    assert all(c.get("copy_b") for c in gemm.configs_for(True) if c["kernel"] in ("tma", "ws"))
    tma_nk = [c for c in gemm.CONFIGS if c["kernel"] == "tma_nk"]
    assert 2 <= len(tma_nk) <= 4 and not any(c.get("copy_b") for c in tma_nk)
    assert {(c["block_m"], c["block_n"], c["block_k"]) for c in tma_nk} >= {(128, 256, 64), (128, 128, 64)}
    for cfg in gemm.CONFIGS:
        if cfg["kernel"] == "ws":
            tiles = dataclasses.asdict(CANDIDATES[cfg["config"]])
            out_box = tiles["block_n"] // (2 if tiles["epilogue_subtile"] else 1)
        else:
            tiles, out_box = cfg, cfg["block_n"] if cfg["kernel"] in ("tma", "tma_nk") else 0
        ring = tiles["num_stages"] * 2 * (tiles["block_m"] + tiles["block_n"]) * tiles["block_k"]
        assert ring + 2 * tiles["block_m"] * out_box <= 227 * 1024, cfg


def test_tma_nk_reads_the_weight_in_place(monkeypatch):
    """The sweep's ``tma_nk`` runner hands the unit's ``linear`` the task's ``w [N, K]`` itself (no
    transposed copy), while ``copy_b`` TMA gets a fresh row-major ``[K, N]`` copy."""
    seen = []
    monkeypatch.setattr(gemm.tma, "linear", lambda a, w, **tiles: seen.append(("linear", w)))
    monkeypatch.setattr(gemm.tma, "matmul", lambda a, b, **tiles: seen.append(("matmul", b)))
    a, w = gemm.operands(8, 16, 24, True, "cpu")
    for cfg in gemm.configs_for(True):
        if cfg["kernel"] in ("tma", "tma_nk"):
            gemm.runner(cfg, True)(a, w)
    entry, copy = [e for e in seen if e[0] == "linear"], [e for e in seen if e[0] == "matmul"]
    assert len(entry) == sum(c["kernel"] == "tma_nk" for c in gemm.CONFIGS) >= 2
    assert all(t.shape == w.shape and t.stride() == w.stride() and t.data_ptr() == w.data_ptr() for _, t in entry)
    assert len(copy) == 1 and copy[0][1].shape == (24, 16) and copy[0][1].is_contiguous()
    assert copy[0][1].data_ptr() != w.data_ptr()


def _run(monkeypatch, capsys, times: list[float], shapes: list[tuple], deadline: float = math.inf) -> list[dict]:
    """``sweep_shape`` over ``shapes`` with ``median_ms_and_cv`` answering ``times`` in call order."""
    answers = iter(times)
    monkeypatch.setattr(gemm, "median_ms_and_cv", lambda fn, inputs: (next(answers), 0.01))
    for shape in shapes:
        gemm.sweep_shape(*shape, rounds=2, deadline=deadline)
    assert next(answers, None) is None, "fewer timings than expected"
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


@pytest.fixture
def small_sweep(monkeypatch):
    """Two configurations that run in both layouts' tests and one that cannot run at all."""
    monkeypatch.setattr(gemm, "DEVICE", DEVICE)
    monkeypatch.setattr(gemm, "_results", {})
    monkeypatch.setattr(gemm, "CONFIGS", (gemm.CONFIGS[3], gemm.CONFIGS[9], {"kernel": "missing"}))


def test_sweep_rows_name_the_best_configuration_and_the_geomean(small_sweep, monkeypatch, capsys):
    # [K, N] layout: cuBLAS, expert, grouped, tma (the missing kernel is an error row), two rounds;
    # linear layout: cuBLAS, expert, grouped (TMA needs copy_b there).
    rows = _run(monkeypatch, capsys, [1.0, 2.0, 1.6, 0.8, 1.0, 2.2, 1.6, 0.8] + [1.0, 1.5, 1.2] * 2,
                [("gemm_bf16", 72, 264, 136, False), ("linear_large_bf16", 72, 264, 136, True)])
    kinds = [r["kind"] for r in rows]
    assert kinds.count("time") == 14 and kinds.count("error") == 1 and kinds.count("geomean") == 2
    assert all(r["cfg"] == {"kernel": "missing"} for r in rows if r["kind"] == "error")
    summaries = [r for r in rows if r["kind"] == "summary"]
    assert len(summaries) == 7 and all(r["err"] < 5e-3 for r in summaries)  # experts included
    expert = next(r for r in summaries if r["cfg"] == "expert")
    assert expert["median_ms"] == 2.1 and expert["vs_cublas"] == pytest.approx(1 / 2.1)
    best = [r for r in rows if r["kind"] == "best"]
    assert [b["cfg"] for b in best] == [gemm.CONFIGS[1], gemm.CONFIGS[0]]
    assert best[0]["vs_cublas"] == pytest.approx(1.25) and best[0]["vs_expert"] == pytest.approx(2.1 / 0.8)
    final = rows[-1]
    assert final["kind"] == "geomean" and final["shapes"] == ["gemm_bf16", "linear_large_bf16"]
    assert final["best_vs_cublas"] == pytest.approx(math.sqrt(1.25 / 1.2))
    assert final["expert_vs_cublas"] == pytest.approx(math.sqrt(1 / 2.1 / 1.5))
    assert final["faster_vs_cublas"] == final["best_vs_cublas"]


def test_sweep_past_its_deadline_times_only_the_baselines(small_sweep, monkeypatch, capsys):
    rows = _run(monkeypatch, capsys, [1.0, 0.9], [("gemm_bf16", 72, 264, 136, False)], deadline=-math.inf)
    assert [r["kind"] for r in rows].count("skipped") == 3 and not [r for r in rows if r["kind"] == "best"]
    assert rows[-1]["kind"] == "geomean" and rows[-1]["best_vs_cublas"] == pytest.approx(1 / 0.9)


def test_gemm_sweep_needs_a_gpu(monkeypatch, capsys):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert gemm.main([]) == 2
    assert "CUDA GPU" in capsys.readouterr().err
