"""The Gluon units: registered like every unit, skipped on CPU with the reason, cross-compiled for
sm_90a without a GPU, and run against the reference on a Hopper GPU.

On CPU (no interpreter for Gluon) the honest checks are the registry's (the solution is skipped
with ``GLUON_CPU_SKIP``, the naive twin and reference still run: ``test_units``), and that Triton
compiles every configuration for the H200 (``units.lib.gluon_compile``), with the resources the design
promises: 384 threads (a producer warpgroup and two consumer warpgroups), no spills, shared memory
within the H200's 227 KiB. On a Hopper GPU the solutions are compared with the float64 reference.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch

from hawkeye_env.judge.parent.decide.correctness import compare
from hawkeye_env.tasks.spec import BF16
from hawkeye_env.units_verify import JUDGE_CHECKS
from units.lib.gluon_compile import H200_SHARED_BYTES, gluon_units
from units.lib.harness import check_unit_cpu, poisoned_empty
from units.lib.index import UNITS_DIR, resolve
from units.lib.spec import GLUON_CPU_SKIP

GLUON = gluon_units()
GLUON_IDS = [u.name for u in GLUON]
HOPPER = torch.cuda.is_available() and torch.cuda.get_device_capability() >= (9, 0)
# 12 warps: two 4-warp consumer warpgroups and a producer warp padded to a warpgroup.
WS_THREADS = 384
# Processes sharing the sm_90a compiles (CPU-bound: Triton's passes and ptxas). On the CI's two
# cores the 22 cases took 58 s in one process, cold cache.
COMPILE_SHARDS = 2


def test_the_three_gluon_units_are_registered():
    assert set(GLUON_IDS) == {"ws_persistent_gemm", "ws_fp8_gemm", "ws_attention_fwd"}
    for unit in GLUON:
        assert unit.architecture == "hopper" and "compile_cases" in unit.extra
        assert unit.cpu_skip("solution") == GLUON_CPU_SKIP
        assert not unit.cpu_skip("naive") and not unit.cpu_skip("reference")


def _cases():
    return [pytest.param((unit.name, case.name), id=f"{unit.name}:{case.name}") for unit in GLUON
            for case in resolve(unit.extra["compile_cases"])()]


def _compile(*flags: str, shards: int = 1) -> dict:
    """``python -m units.lib.gluon_compile --json`` in ``shards`` fresh processes at once, each compiling
    every ``shards``-th case (``--shard K/N``), without ``TRITON_INTERPRET`` (under the interpreter
    Triton's ``jit`` helpers that Gluon reductions call are not compilable); the reports merged."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    procs = [subprocess.Popen([sys.executable, "-m", "units.lib.gluon_compile", "--json", "--shard", f"{k}/{shards}",
                               *flags], cwd=UNITS_DIR.parent, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for k in range(shards)]
    reports = [proc.communicate(timeout=1800) for proc in procs]  # every process ends before any assert
    merged = {}
    for out, err in reports:
        assert out.strip(), err[-3000:]
        merged.update({(unit, r["name"]): r for unit, cases in json.loads(out).items() for r in cases})
    return merged


def test_the_shard_option_takes_k_of_n():
    from units.lib.gluon_compile import parse_shard

    assert parse_shard("1/3") == (1, 3)
    for bad in ("3/3", "1", "a/2", "-1/2"):
        with pytest.raises(ValueError):
            parse_shard(bad)


def _check_compiled(report: dict) -> None:
    assert report["ok"], report["error"]
    assert report["threads"] == WS_THREADS, report
    assert report["spill_bytes"] == 0, report["ptxas_log"]
    assert report["shared_bytes"] <= H200_SHARED_BYTES, report
    assert len(report["setmaxnreg"]) > 1, "no register reallocation between partitions"


@pytest.fixture(scope="module")
def compiled() -> dict:
    return _compile(shards=COMPILE_SHARDS)


def test_gluon_solutions_compile_for_sm90a(compiled):
    """Each unit's first compile case is its solution (``units.lib.gluon_compile.compile_unit``)."""
    assert {unit for unit, _ in compiled} == set(GLUON_IDS)
    for unit in GLUON:
        first = resolve(unit.extra["compile_cases"])()[0]
        _check_compiled(compiled[(unit.name, first.name)])


@pytest.mark.slow
@pytest.mark.parametrize("case", _cases())
def test_every_gluon_configuration_compiles_for_sm90a(case, compiled):
    _check_compiled(compiled[case])


def test_the_attention_solution_keeps_its_wgmma_chain_asynchronous(compiled):
    """ptxas serializes a wgmma chain (``C7512``/``C7515``) when a CUDA-core instruction writes an
    accumulator in flight, as the deferred ``P V`` schedule's ``O *= alpha`` does; the overlap
    schedule rescales ``O`` between wgmmas only, which is where its speed comes from (the unit's
    README, Measured). Both D = 128 causal kernels are compiled; only the deferred one is serialized."""
    from units.ws_attention_fwd.kernel import SOLUTION, AttnConfig

    solution = compiled[("ws_attention_fwd", f"causal_d128_{SOLUTION.name}")]
    deferred = compiled[("ws_attention_fwd", f"causal_d128_{AttnConfig().name}")]
    assert SOLUTION.overlap and "C751" not in solution["ptxas_log"], solution["ptxas_log"]
    assert "C751" in deferred["ptxas_log"], "the deferred schedule no longer serializes: recheck the README"


def test_attention_or_twin_runs_the_triton_kernel_where_gluon_cannot():
    """The attention experts' call: on the CPU (no interpreter for Gluon) and at S not a multiple of
    128 on any device, ``serves`` is false and the result is ``units.online_softmax``'s kernel's,
    bit for bit."""
    from units.online_softmax.attention import flash_attention
    from units.ws_attention_fwd.kernel import SOLUTION, attention_or_twin, serves

    device = "cuda" if torch.cuda.is_available() else "cpu"
    g = torch.Generator().manual_seed(0)
    q = torch.randn(1, 4, 130, 64, generator=g).to(device, torch.bfloat16)
    k, v = (torch.randn(1, 2, 130, 64, generator=g).to(device, torch.bfloat16) for _ in range(2))
    assert not serves(q, k, v, SOLUTION)
    for causal in (True, False):
        assert torch.equal(attention_or_twin(q, k, v, causal), flash_attention(q, k, v, causal=causal))


@pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU check of the Gluon units")
def test_cpu_check_skips_the_solution_with_the_reason(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    unit = next(u for u in GLUON if u.name == "ws_persistent_gemm")
    report = check_unit_cpu(unit, JUDGE_CHECKS)
    assert report["skipped"] == {"solution": GLUON_CPU_SKIP}
    assert set(report["results"]) == {"naive", "reference"} and report["ok"], report


@pytest.mark.gpu
@pytest.mark.skipif(not HOPPER, reason="Gluon kernels need a Hopper GPU; no interpreter")
@pytest.mark.parametrize("unit", GLUON, ids=GLUON_IDS)
def test_gluon_solution_matches_reference_on_hopper(unit):
    make, solution, reference = (resolve(p) for p in (unit.make_inputs, unit.solution, unit.reference))
    for seed, shape in enumerate(unit.gpu_shapes[-1:] + ({k: v for k, v in unit.cpu_shapes[-1].items()},)):
        if unit.name == "ws_attention_fwd" and shape["S"] % 128:
            continue
        inputs = make(shape, "cuda", seed)
        with poisoned_empty():
            out = solution(*inputs)
        expected = reference(*(t.double() if t.is_floating_point() else t for t in inputs))
        verdict = compare(out, expected, torch.bfloat16, BF16, compute_device="cuda")
        assert verdict["ok"], f"{unit.name} {shape}: {verdict['reason']}"


def test_bf16_fits_tma_reads_b_in_place_or_needs_its_rows_aligned():
    """``ws_persistent_gemm.fits_tma`` on bf16: a K-major ``b = w.t()`` and a row-major ``b`` are
    read in place, so a row-major ``b`` whose row stride is not 16-byte aligned does not fit, unless
    the caller copies it to K-major first (``copies_b``)."""
    from units.ws_persistent_gemm.kernel import fits_tma

    a = torch.zeros(64, 64, dtype=torch.bfloat16)
    assert fits_tma(a, torch.zeros(48, 64, dtype=torch.bfloat16).t())  # K-major, 128-byte rows
    assert fits_tma(a, torch.zeros(64, 48, dtype=torch.bfloat16))  # row-major, 96-byte rows
    padded = torch.zeros(64, 52, dtype=torch.bfloat16)[:, :48]  # rows 104 bytes apart
    assert not fits_tma(a, padded)
    assert fits_tma(a, padded, copies_b=True)
    assert not fits_tma(a, torch.zeros(64, 44, dtype=torch.bfloat16))  # 88-byte output rows


def test_fits_tma_sends_rows_tma_cannot_describe_to_the_triton_kernel():
    """``ws_fp8_gemm.fits_tma``: the FP8 experts launch the Gluon kernel only when TMA can describe
    ``a [M, K]``, ``b = w.t()`` and the bf16 output (16-byte rows), and the masked Triton kernel
    otherwise (the judge's odd correctness shapes, K = 200 or N = 45)."""
    from units.ws_fp8_gemm.kernel import fits_tma

    def operands(m, n, k):
        return torch.zeros(m, k, dtype=torch.float8_e4m3fn), torch.zeros(n, k, dtype=torch.float8_e4m3fn).t()

    assert fits_tma(*operands(67, 48, 208)) and fits_tma(*operands(1, 8, 16))
    assert not fits_tma(*operands(67, 48, 200))  # fp8 rows of 200 bytes
    assert not fits_tma(*operands(67, 45, 208))  # bf16 output rows of 90 bytes
    a, b = operands(64, 64, 64)
    assert not fits_tma(a[:, 1:17], b[1:17])  # a view whose base is one byte off
    assert fits_tma(a, b.contiguous())  # a row-major b is copied to K-major, which TMA can read
