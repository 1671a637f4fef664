"""The five matmul units run correctly under the Triton interpreter (or on CUDA when present).

Every solution, naive kernel and extra callable is compared in float64 with the judge's ``compare``
and the bf16 tolerance against the unit's PyTorch reference, at each CPU shape and two seeds,
with uninitialized allocations filled with NaN so unwritten output elements fail.
"""

from __future__ import annotations

import functools

import pytest
import torch

from hawkeye_env.judge.parent.decide.correctness import compare
from hawkeye_env.tasks.spec import BF16
from units.lib.index import get_unit, resolve

MATMUL_UNITS = (
    "grouped_tile_order", "software_pipelining", "tma_descriptors", "persistent_splitk",
    "warp_specialization",
)
SEEDS = (0, 1)  # two draws per shape, as units.lib.harness.SEEDS
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def _poisoned_call(fn, *args):
    deterministic = torch.are_deterministic_algorithms_enabled()
    fill = torch.utils.deterministic.fill_uninitialized_memory
    torch.use_deterministic_algorithms(True)
    torch.utils.deterministic.fill_uninitialized_memory = True
    try:
        return fn(*args)
    finally:
        torch.use_deterministic_algorithms(deterministic)
        torch.utils.deterministic.fill_uninitialized_memory = fill


def _callables(unit) -> list[tuple[str, str]]:
    paths = [("solution", unit.solution), ("naive", unit.naive)]
    paths += [(key, path) for key, path in unit.extra.items() if ":" in path]
    return paths


@pytest.mark.parametrize("name", MATMUL_UNITS)
def test_unit_matches_reference(name):
    unit = get_unit(name)
    make_inputs = resolve(unit.make_inputs)
    reference = resolve(unit.reference)
    for role, path in _callables(unit):
        fn = resolve(path)
        for shape in unit.cpu_shapes:
            for seed in SEEDS:
                a, b = make_inputs(shape, DEVICE, seed)
                ref = reference(a.double(), b.double())
                out = _poisoned_call(fn, a, b)
                verdict = compare(out, ref, torch.bfloat16, BF16)
                assert verdict["ok"], f"{name} {role} {dict(shape)} seed {seed}: {verdict['reason']}"


@pytest.mark.parametrize("name", MATMUL_UNITS)
def test_unit_metadata(name):
    unit = get_unit(name)
    assert unit.metric is not None and unit.metric.min_margin > 1.0
    assert "tiled_mma" in unit.tags
    assert any(any(v & (v - 1) for v in shape.values()) for shape in unit.cpu_shapes)
    for shape in unit.gpu_shapes:
        assert unit.flops(**shape) == 2.0 * shape["M"] * shape["N"] * shape["K"]
        assert unit.bytes_moved(**shape) > 0


def test_every_margin_is_a_gain():
    # A unit passes only if its solution beats the naive kernel; on Hopper, where the wgmma loop is
    # already asynchronous, the TMA and warp-specialization margins are the smallest (5% and 8%).
    margins = {name: get_unit(name).metric for name in MATMUL_UNITS}
    assert all(m.min_margin > 1.0 and m.higher_is_better for m in margins.values())
    smallest = sorted(margins, key=lambda n: margins[n].min_margin)[:2]
    assert set(smallest) == {"tma_descriptors", "warp_specialization"}


def test_tma_operands_must_be_aligned():
    from units.tma_descriptors.kernel import matmul

    a = torch.randn(16, 33, dtype=torch.bfloat16)
    b = torch.randn(33, 16, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="16-byte"):
        matmul(a.to(DEVICE), b.to(DEVICE))


# (block_m, block_n, block_k, group_m, num_stages, num_warps): the unit's tile and the sweep's other
# two for the linear tasks, and a small tile with a 2-row group so several groups and ragged bands run.
TMA_LINEAR_TILES = ((128, 256, 64, 8, 3, 8), (128, 128, 64, 8, 4, 8), (256, 128, 64, 8, 3, 8), (32, 64, 32, 2, 2, 4))


@pytest.mark.parametrize("tiles", TMA_LINEAR_TILES, ids=lambda t: "x".join(map(str, t[:3])) + f"_s{t[4]}_w{t[5]}")
@pytest.mark.parametrize("m, n, k", [(130, 264, 136), (33, 72, 200)])
def test_tma_linear_reads_an_nn_linear_weight(tiles, m, n, k):
    """``linear(x, w)`` is ``x @ w.T`` for ``w [N, K]`` at M off every tile, N and K multiples of 8
    (off the 64/128/256 tiles: partial column and K boxes), with a NaN-poisoned output."""
    from units.tma_descriptors.kernel import linear

    bm, bn, bk, group_m, stages, warps = tiles
    fn = functools.partial(linear, block_m=bm, block_n=bn, block_k=bk, group_m=group_m, num_stages=stages,
                           num_warps=warps)
    g = torch.Generator().manual_seed(m + k)
    x = torch.randn(m, k, generator=g).to(torch.bfloat16).to(DEVICE)
    w = torch.randn(n, k, generator=g).to(torch.bfloat16).to(DEVICE)
    out = _poisoned_call(fn, x, w)
    assert out.shape == (m, n) and out.dtype == torch.bfloat16
    _rel_l2_ok(out, x.double() @ w.double().t(), f"linear {tiles} M={m} N={n} K={k}")


def test_tma_linear_describes_the_weight_itself(monkeypatch):
    """No copy of ``w``: its descriptor is built on ``w``'s own storage with ``[block_n, block_k]``
    boxes; ``matmul``'s B descriptor keeps ``[block_k, block_n]``."""
    from units.tma_descriptors import kernel

    built = []
    from_tensor = kernel.TensorDescriptor.from_tensor

    def spy(t, block_shape, *args, **kwargs):
        built.append((t.data_ptr(), tuple(t.shape), list(block_shape)))
        return from_tensor(t, block_shape, *args, **kwargs)

    monkeypatch.setattr(kernel.TensorDescriptor, "from_tensor", staticmethod(spy))
    x = torch.randn(40, 48, dtype=torch.bfloat16).to(DEVICE)
    w = torch.randn(24, 48, dtype=torch.bfloat16).to(DEVICE)
    kernel.linear(x, w, block_m=32, block_n=16, block_k=32, num_stages=2, num_warps=4)
    assert built[1] == (w.data_ptr(), (24, 48), [16, 32]) and len(built) == 3
    built.clear()
    kernel.matmul(x, w.t().contiguous(), block_m=32, block_n=16, block_k=32, num_stages=2, num_warps=4)
    assert built[1][1:] == ((48, 24), [32, 16])


def test_tma_linear_refuses_what_tma_cannot_describe():
    from units.tma_descriptors.kernel import linear

    x = torch.randn(16, 40, dtype=torch.bfloat16).to(DEVICE)
    w_kn = torch.randn(40, 24, dtype=torch.bfloat16).to(DEVICE)
    with pytest.raises(ValueError, match=r"^w \(24, 33\).*16-byte"):  # K = 33: w's rows are 66 bytes
        linear(x[:, :33], torch.randn(24, 33, dtype=torch.bfloat16).to(DEVICE))  # x's rows stay 80 bytes apart
    with pytest.raises(ValueError, match=r"^w \(24, 40\).*16-byte"):  # w = b.t() of a row-major b
        linear(x, w_kn.t())
    with pytest.raises(ValueError, match=r"^c \(16, 20\).*16-byte"):  # N = 20: the output's rows are 40 bytes
        linear(x, torch.randn(20, 40, dtype=torch.bfloat16).to(DEVICE))
    with pytest.raises(ValueError, match=r"w \[N, K\]"):
        linear(x, w_kn)
    with pytest.raises(TypeError, match="bfloat16"):
        linear(x.float(), w_kn.t().contiguous().float())


def test_split_k_fills_the_gpu_at_the_skinny_shape():
    from units.persistent_splitk.kernel import CTAS_PER_SM, MIN_K_TILES_PER_SPLIT, split_k_for

    assert CTAS_PER_SM == 4
    assert split_k_for(64, 4096, 16384, 132) == 16  # 32 tiles x 16 = 512 programs, 4 per SM
    assert split_k_for(64, 1024, 65536, 132) == 64  # 8 tiles x 64 (66 asked, lowered so ranges are equal)
    assert split_k_for(8192, 8192, 8192, 132) == 1
    assert split_k_for(64, 128, 512, 132) == 512 // 64 // MIN_K_TILES_PER_SPLIT  # each range keeps 4 K tiles


def test_split_k_takes_a_decode_configuration_and_a_transposed_weight():
    """Explicit tiles and ``split_k`` (lowered so no K range is empty) on ``b = w.t()`` of an
    ``nn.Linear``-layout weight, at an odd K whose last range is partial."""
    from units.persistent_splitk.kernel import matmul, no_empty_split

    assert [no_empty_split(5, s) for s in (1, 2, 3, 4, 5, 9)] == [1, 2, 3, 3, 5, 5]
    g = torch.Generator().manual_seed(0)
    x = torch.randn(5, 600, generator=g).to(torch.bfloat16).to(DEVICE)
    w = torch.randn(70, 600, generator=g).to(torch.bfloat16).to(DEVICE)
    for split_k in (1, 4, 9):
        decode = functools.partial(matmul, block_m=16, block_n=64, block_k=128, split_k=split_k, num_stages=4,
                                   num_warps=4)
        out = _poisoned_call(decode, x, w.t())
        verdict = compare(out, x.double() @ w.double().t(), torch.bfloat16, BF16)
        assert verdict["ok"], f"split_k={split_k}: {verdict['reason']}"


def _rel_l2_ok(out, ref, what):
    verdict = compare(out, ref, torch.bfloat16, BF16)
    assert verdict["ok"], f"{what}: {verdict['reason']}"


@pytest.mark.parametrize("m", [1, 5, 16, 33])
@pytest.mark.parametrize("split_k", [1, 3])
def test_split_k_swap_ab_at_odd_shapes_and_strides(m, split_k):
    """``swap_ab=True`` (``C^T = B^T A^T``) at M below, at and above one 16-row tile, N and K not
    multiples of the tiles, on ``b = w.t()`` (K stride 1), a contiguous ``b`` and a strided ``a``,
    with NaN-poisoned partials and output."""
    from units.persistent_splitk.kernel import matmul

    g = torch.Generator().manual_seed(m)
    x = torch.randn(m, 333, generator=g).to(torch.bfloat16).to(DEVICE)
    w = torch.randn(70, 333, generator=g).to(torch.bfloat16).to(DEVICE)
    x_strided = torch.randn(m, 2 * 333, generator=g).to(torch.bfloat16).to(DEVICE)[:, ::2]
    b_kn = torch.randn(333, 130, generator=g).to(torch.bfloat16).to(DEVICE)
    swap = functools.partial(matmul, block_m=16, block_n=64, block_k=64, split_k=split_k, num_stages=4,
                             num_warps=4, swap_ab=True)
    cases = (("x @ w.t()", x, w.t()), ("a[:, ::2] @ b", x_strided, b_kn), ("x @ b[:, 3:]", x, b_kn[:, 3:]))
    for what, a, b in cases:
        out = _poisoned_call(swap, a, b)
        assert out.shape == (m, b.shape[1])
        _rel_l2_ok(out, a.double() @ b.double(), f"M={m} split_k={split_k} {what}")


def test_split_k_swap_ab_sums_the_same_partials():
    """With and without ``swap_ab`` the partial tiles hold the same fp32 dot products, so the
    bf16 outputs agree to fp32 rounding (one bf16 ulp at most) after the same fixed-order sum."""
    from units.persistent_splitk.kernel import matmul

    g = torch.Generator().manual_seed(5)
    a = torch.randn(20, 700, generator=g).to(torch.bfloat16).to(DEVICE)
    b = torch.randn(700, 100, generator=g).to(torch.bfloat16).to(DEVICE)
    plain = _poisoned_call(functools.partial(matmul, block_m=32, block_n=64, block_k=64, split_k=4), a, b)
    swap = _poisoned_call(functools.partial(matmul, block_m=32, block_n=64, block_k=64, split_k=4, swap_ab=True), a, b)
    torch.testing.assert_close(swap.float(), plain.float(), rtol=2**-7, atol=1e-3)
    _rel_l2_ok(swap, a.double() @ b.double(), "swap_ab")


@pytest.mark.parametrize("m, n, k, split_k, swap_ab", [(16, 70, 300, 2, True), (5, 130, 1100, 3, True),
                                                      (33, 96, 520, 4, False), (1, 33, 200, 2, True)])
def test_fused_reduce_gives_the_two_kernel_bits(m, n, k, split_k, swap_ab):
    """``fused_reduce=True`` (the tile's last split sums the partials, no second kernel) returns the
    same bits as the separate fixed-order reduction, at N and K off the tiles and NaN-poisoned
    buffers, leaves every arrival count at 0, and a second call (counts reused) agrees again."""
    from units.persistent_splitk.kernel import arrival_counters, matmul

    g = torch.Generator().manual_seed(m + n)
    a = torch.randn(m, k, generator=g).to(torch.bfloat16).to(DEVICE)
    w = torch.randn(n, k, generator=g).to(torch.bfloat16).to(DEVICE)
    call = functools.partial(matmul, block_m=16 if m <= 16 else 64, block_n=64, block_k=64, split_k=split_k,
                             swap_ab=swap_ab)
    two_kernels = _poisoned_call(call, a, w.t())
    for _ in range(2):
        fused = _poisoned_call(functools.partial(call, fused_reduce=True), a, w.t())
        assert torch.equal(fused, two_kernels)
        assert int(arrival_counters(a.device, 1).abs().sum()) == 0
    _rel_l2_ok(fused, a.double() @ w.double().t(), f"fused M={m} split_k={split_k}")


def _small_m_sweep():
    from bench.kerneldev.sweeps import small_m_gemm

    return small_m_gemm


@pytest.mark.parametrize("cfg", _small_m_sweep().CONFIGS, ids=str)
def test_every_small_m_sweep_configuration_is_correct(cfg):
    """What ``bench.kerneldev.sweeps.small_m_gemm`` will time on the GPU computes the GEMM, through the
    sweep's own ``call``, at small versions of both layouts: linear_decode's ``x @ w.t()`` (M=16)
    and gemm_skinny's ``a @ b`` (M=33, block_m 64), N and K off the tiles."""
    sweep = _small_m_sweep()
    g = torch.Generator().manual_seed(11)
    for m, n, k, weight_nk in ((16, 70, 300, True), (33, 130, 520, False)):
        a = torch.randn(m, k, generator=g).to(torch.bfloat16).to(DEVICE)
        w = torch.randn(*((n, k) if weight_nk else (k, n)), generator=g).to(torch.bfloat16).to(DEVICE)
        out = _poisoned_call(sweep.call, cfg, a, w, weight_nk)
        ref = a.double() @ (w.double().t() if weight_nk else w.double())
        _rel_l2_ok(out, ref, f"{cfg} M={m} weight_nk={weight_nk}")


def test_small_m_sweep_lists_both_task_shapes_and_swap_ab():
    sweep = _small_m_sweep()
    assert {s[:4] for s in sweep.SHAPES} == {("linear_decode", 16, 6144, 4096), ("gemm_skinny", 64, 4096, 16384)}
    assert 12 <= len(sweep.CONFIGS) <= 20 and len({str(c) for c in sweep.CONFIGS}) == len(sweep.CONFIGS)
    assert {c["swap_ab"] for c in sweep.CONFIGS} == {False, True}
    assert [sweep.block_m_for(m) for m in (1, 5, 16, 17, 33, 64, 200)] == [16, 16, 16, 32, 64, 64, 64]
    for cfg in sweep.CONFIGS:  # every tile fits the H200's 227 KiB of shared memory at M = 64
        assert cfg["num_stages"] * 2 * (cfg["block_n"] + 64) * cfg["block_k"] <= 227 * 1024, cfg


def test_small_m_sweep_needs_a_gpu(monkeypatch, capsys):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert _small_m_sweep().main([]) == 2
    assert "CUDA GPU" in capsys.readouterr().err


@pytest.mark.parametrize("task,m,n,k", [("linear_decode_bf16", 16, 6144, 4096), ("gemm_skinny_bf16", 64, 4096, 16384)])
def test_small_m_experts_run_a_swept_configuration(task, m, n, k):
    """The small-M experts' tiles at their GPU shape are a configuration the small-M sweep timed
    (so a figure in their docstrings belongs to them), with ``block_m`` the sweep's for that M."""
    import importlib

    sweep = _small_m_sweep()
    cfg = dict(importlib.import_module(f"hawkeye_env.tasks.{task}.solution").tile_config(m, n, k))
    assert cfg.pop("block_m") == sweep.block_m_for(m)
    assert cfg in [dict(c) for c in sweep.CONFIGS], f"{task}: {cfg} was not swept"


def test_linear_decode_expert_runs_its_swapped_tiles(monkeypatch):
    """The decode expert forwards every keyword of its ``tile_config`` (``swap_ab``, ``split_k``)."""
    from hawkeye_env.tasks.linear_decode_bf16 import solution as expert
    from units.persistent_splitk import kernel

    seen = []
    real = kernel.matmul

    def spy(a, b, **kw):
        seen.append(kw)
        return real(a, b, **kw)

    monkeypatch.setattr(expert, "matmul", spy)
    g = torch.Generator().manual_seed(2)
    model = expert.ModelNew(300, 70).to(DEVICE)
    with torch.no_grad():
        model.weight.copy_(torch.randn(70, 300, generator=g).to(torch.bfloat16))
    x = torch.randn(5, 300, generator=g).to(torch.bfloat16).to(DEVICE)
    out = _poisoned_call(model, x)
    assert seen and seen[0]["swap_ab"] is True and seen[0]["split_k"] == 2
    _rel_l2_ok(out, x.double() @ model.weight.detach().double().t(), "linear_decode expert with swap_ab")


FUSED_PTX_SCRIPT = """
import json
from units.persistent_splitk.kernel import _splitk_partial_kernel
from units.lib.triton_compile import compile_sm90
sig = {n: "*bf16" for n in ("a_ptr", "b_ptr", "c_ptr")} | {"partial_ptr": "*fp32", "arrivals_ptr": "*i32"}
sig |= {n: "i32" for n in ("M", "N", "K", "K_PER_SPLIT", "stride_am", "stride_ak", "stride_bk", "stride_bn")}
const = {"BLOCK_M": 16, "BLOCK_N": 128, "BLOCK_K": 128, "SWAP_AB": True, "SPLIT_K": 2, "FUSED": True}
print(json.dumps(compile_sm90(_splitk_partial_kernel, sig, const, num_stages=4).asm["ptx"]))
"""


def test_the_fused_reduction_orders_the_partials_before_the_last_split_reads_them():
    """The decode expert's fused split-K kernel compiled for sm_90 (a fresh process without the
    interpreter): every thread's partial store is behind a CTA barrier before one thread's
    ``atom.acq_rel.gpu`` arrival, a barrier follows it (the count's broadcast), the last split
    reads the partials past L1 (``ld.global.cg``) only after, and the count is put back to 0."""
    import json
    import os
    import re
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    proc = subprocess.run([sys.executable, "-c", FUSED_PTX_SCRIPT], capture_output=True, text=True, env=env,
                          timeout=600, cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    assert proc.returncode == 0, proc.stderr[-3000:]
    ptx = json.loads(proc.stdout.strip().splitlines()[-1]).splitlines()
    arrive = [i for i, line in enumerate(ptx) if re.search(r"atom\.global\.gpu\.acq_rel\.add", line)]
    assert len(arrive) == 1 and ptx[arrive[0]].lstrip().startswith("@"), "one predicated (one-thread) arrival"
    barriers = [i for i, line in enumerate(ptx) if "bar.sync" in line]
    partial_stores = [i for i, line in enumerate(ptx[:arrive[0]]) if "st.global" in line]
    partial_loads = [i for i, line in enumerate(ptx) if "ld.global.cg" in line]
    assert partial_stores and any(max(partial_stores) < b < arrive[0] for b in barriers)
    assert any(b > arrive[0] for b in barriers)
    assert partial_loads and min(partial_loads) > min(b for b in barriers if b > arrive[0])
    assert any(re.search(r"atom\.global\.gpu\.\w+\.exch", line) for line in ptx[max(partial_loads):])
