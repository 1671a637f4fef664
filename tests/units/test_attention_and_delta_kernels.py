"""The kernels added beside the online_softmax and chunked_scan units, called directly at odd shapes
with NaN-poisoned outputs: flash attention (causal or not, grouped heads), flash decoding (several
splits, a partial one), vector-gated GLA and the (gated) delta rule, against float64 references."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from bench.kerneldev.sweeps.attention import BASE as SWEEP_BASE
from bench.kerneldev.sweeps.attention import CONFIGS as SWEEP_CONFIGS
from bench.kerneldev.sweeps.attention import DECODE_BASE, DECODE_CONFIGS
from hawkeye_env.tasks.gla_fwd_bf16.task import gla_reference
from hawkeye_env.tasks.shared.attention_common import explicit_attention
from hawkeye_env.tasks.shared.delta_rule_common import chunked_delta_rule, l2norm
from units.chunked_scan.delta_rule import chunk_delta_rule
from units.chunked_scan.gla import chunk_gla
from units.online_softmax.attention import decode_splits, flash_attention, flash_decode, tma_layout_ok

SEEDS = (0, 1)
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
# bf16 tolerances: attention and GLA land near 2e-3 / 3.5e-3 rel L2 at these shapes; the delta
# rule near 6e-3 (hawkeye_env.tasks.shared.delta_rule_common.DELTA_RULE_BF16).
REL_L2 = {"attention": 5e-3, "gla": 6e-3, "delta": 1.2e-2}


@pytest.fixture(autouse=True)
def poisoned_empty(monkeypatch):
    """Every ``torch.empty`` / ``empty_like`` the kernels' wrappers allocate starts as NaN."""
    empty, empty_like = torch.empty, torch.empty_like
    monkeypatch.setattr(torch, "empty", lambda *a, **k: empty(*a, **k).fill_(float("nan")))
    monkeypatch.setattr(torch, "empty_like", lambda *a, **k: empty_like(*a, **k).fill_(float("nan")))


def _rel(out, ref):
    assert torch.isfinite(out).all()
    return ((out.double() - ref.double()).norm() / ref.double().norm()).item()


def _bf16(*shape, gen):
    return torch.randn(*shape, generator=gen).to(device=DEVICE, dtype=torch.bfloat16)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("b, hq, hkv, s, d", [(1, 4, 2, 67, 32), (2, 3, 1, 130, 16), (1, 2, 2, 200, 64)])
def test_flash_attention(b, hq, hkv, s, d, causal, seed):
    gen = torch.Generator().manual_seed(seed)
    q, k, v = _bf16(b, hq, s, d, gen=gen), _bf16(b, hkv, s, d, gen=gen), _bf16(b, hkv, s, d, gen=gen)
    ref = explicit_attention(q.double(), k.double(), v.double(), causal)
    assert _rel(flash_attention(q, k, v, causal), ref) < REL_L2["attention"]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("knobs", [
    {"use_tma": True, "block_m": 64, "block_n": 32},                       # TMA path, S a multiple of both
    {"use_tma": True, "warp_specialize": True, "block_m": 32, "block_n": 32},
    {"block_m": 64, "block_n": 64, "num_warps": 4, "num_stages": 2},       # pointer path, other tile
    {"fold_scale": True, "block_m": 64, "block_n": 32},                    # scale in the exponent's FMA
    {"use_tma": True, "block_m": 128, "block_n": 64},                      # S = 192: falls back to pointers
])
def test_flash_attention_tile_and_tma_variants(knobs, causal):
    gen = torch.Generator().manual_seed(7)
    b, hq, hkv, s, d = 2, 4, 2, 192 if knobs.get("block_m") == 128 else 128, 32
    q, k, v = _bf16(b, hq, s, d, gen=gen), _bf16(b, hkv, s, d, gen=gen), _bf16(b, hkv, s, d, gen=gen)
    if knobs.get("use_tma"):  # the descriptor path runs where the layout allows it, else pointers
        assert tma_layout_ok(q, k, v, knobs["block_m"], knobs["block_n"]) == (s == 128)
    ref = explicit_attention(q.double(), k.double(), v.double(), causal)
    assert _rel(flash_attention(q, k, v, causal, **knobs), ref) < REL_L2["attention"]


@pytest.mark.parametrize("cfg", SWEEP_CONFIGS, ids=str)
def test_every_attention_sweep_configuration_is_correct(cfg):
    """What ``bench.kerneldev.sweeps.attention`` will time on the GPU computes attention (causal, grouped
    heads) at a shape every tile divides, so the TMA path runs where asked."""
    gen = torch.Generator().manual_seed(3)
    q, k, v = _bf16(1, 2, 256, 32, gen=gen), _bf16(1, 1, 256, 32, gen=gen), _bf16(1, 1, 256, 32, gen=gen)
    ref = explicit_attention(q.double(), k.double(), v.double(), True)
    assert _rel(flash_attention(q, k, v, True, **{**SWEEP_BASE, **cfg}), ref) < REL_L2["attention"]


@pytest.mark.parametrize("cfg", DECODE_CONFIGS, ids=str)
def test_every_decode_sweep_configuration_is_correct(cfg):
    """``flash_decode`` with each knob set the sweep times attends to the whole cache (grouped
    heads, a length no tile divides, several splits)."""
    gen = torch.Generator().manual_seed(5)
    q, k, v = _bf16(2, 4, 1, 32, gen=gen), _bf16(2, 2, 333, 32, gen=gen), _bf16(2, 2, 333, 32, gen=gen)
    ref = explicit_attention(q.double(), k.double(), v.double(), causal=False)
    assert _rel(flash_decode(q, k, v, **{**DECODE_BASE, **cfg}), ref) < REL_L2["attention"]


def test_decode_splits_follow_the_tile_and_the_program_target():
    assert decode_splits(4, 1000, block_n=32, target_programs=16) == (4, 256)
    assert decode_splits(4, 1000, block_n=128, target_programs=16) == (4, 256)
    assert decode_splits(64, 8192, block_n=64, target_programs=64)[0] == 1


def test_flash_attention_refuses_a_causal_tile_that_splits_the_diagonal_block():
    q = torch.zeros(1, 1, 128, 32, dtype=torch.bfloat16, device=DEVICE)
    with pytest.raises(ValueError, match="multiple of block_n"):
        flash_attention(q, q, q, True, block_m=32, block_n=64)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("b, hq, hkv, length, d", [(2, 4, 2, 67, 32), (1, 6, 2, 300, 16), (1, 8, 1, 1000, 32)])
def test_flash_decode(b, hq, hkv, length, d, seed):
    gen = torch.Generator().manual_seed(seed)
    q, k, v = _bf16(b, hq, 1, d, gen=gen), _bf16(b, hkv, length, d, gen=gen), _bf16(b, hkv, length, d, gen=gen)
    ref = explicit_attention(q.double(), k.double(), v.double(), causal=False)
    assert _rel(flash_decode(q, k, v), ref) < REL_L2["attention"]


def test_decode_splits_cover_the_cache_without_empty_splits():
    for bh, length in [(4, 67), (128, 8192), (1, 1000), (2048, 64), (3, 1)]:
        n, split = decode_splits(bh, length)
        assert n >= 1 and split % 64 == 0 and (n - 1) * split < length <= n * split
    assert decode_splits(4, 1000)[0] > 1  # small batches split the cache


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("b, h, t, d", [(1, 2, 67, 32), (2, 1, 130, 16)])
def test_chunk_gla_raw_gate(b, h, t, d, seed):
    gen = torch.Generator().manual_seed(seed)
    q, k, v = (_bf16(b, h, t, d, gen=gen) for _ in range(3))
    gate = torch.randn(b, h, t, d, generator=gen).to(DEVICE)
    ref = gla_reference(q.double(), k.double(), v.double(), F.logsigmoid(gate.double() + 1.0) / 16.0)
    assert _rel(chunk_gla(q, k, v, gate, raw_gate=True, bias=1.0, normalizer=16.0), ref) < REL_L2["gla"]
    g = F.logsigmoid(gate + 1.0) / 16.0
    assert _rel(chunk_gla(q, k, v, g), ref) < REL_L2["gla"]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("gated", [False, True])
@pytest.mark.parametrize("b, h, t, d", [(1, 2, 67, 32), (2, 1, 130, 16)])
def test_chunk_delta_rule(b, h, t, d, gated, seed):
    gen = torch.Generator().manual_seed(seed)
    q, k, v = (_bf16(b, h, t, d, gen=gen) for _ in range(3))
    beta, gate = (torch.randn(b, h, t, generator=gen).to(DEVICE) for _ in range(2))
    g = F.logsigmoid(gate.double() + 4.0) if gated else None
    ref = chunked_delta_rule(l2norm(q.double()), l2norm(k.double()), v.double(), torch.sigmoid(beta.double()), g)
    out = chunk_delta_rule(q, k, v, beta, gate if gated else None, gate_bias=4.0)
    assert _rel(out, ref) < REL_L2["delta"]


@pytest.mark.parametrize("gated", [False, True])
def test_chunk_delta_rule_two_pass_matches_the_fused_walk(gated):
    """The state-then-output form (two value blocks per head, a partial last chunk) against the
    float64 reference and the fused walk (same bf16 roundings: only summation order differs)."""
    b, h, t, d = 2, 1, 130, 32
    gen = torch.Generator().manual_seed(3)
    q, k, v = (_bf16(b, h, t, d, gen=gen) for _ in range(3))
    beta, gate = (torch.randn(b, h, t, generator=gen).to(DEVICE) for _ in range(2))
    g = F.logsigmoid(gate.double() + 4.0) if gated else None
    ref = chunked_delta_rule(l2norm(q.double()), l2norm(k.double()), v.double(), torch.sigmoid(beta.double()), g)
    gate_in = gate if gated else None
    two_pass = chunk_delta_rule(q, k, v, beta, gate_in, gate_bias=4.0, two_pass=True, block_v=16, out_block_v=32)
    fused = chunk_delta_rule(q, k, v, beta, gate_in, gate_bias=4.0)
    assert _rel(two_pass, ref) < REL_L2["delta"]
    assert _rel(two_pass, fused.double()) < 1e-2 * REL_L2["delta"]


@pytest.mark.parametrize("gated", [False, True])
def test_chunk_delta_rule_with_correlated_keys(gated):
    """Mean-shifted keys (normalised |k_i . k_j| near 0.5, every entry of A large and of one sign):
    the blockwise substitution stays as close to the float64 recurrence as on centred keys."""
    b, h, t, d = 1, 2, 130, 32
    gen = torch.Generator().manual_seed(5)
    q, v = (_bf16(b, h, t, d, gen=gen) for _ in range(2))
    k = (torch.randn(b, h, t, d, generator=gen) + 1.0).to(DEVICE, torch.bfloat16)
    beta, gate = (torch.randn(b, h, t, generator=gen).to(DEVICE) + 2.0 for _ in range(2))
    g = F.logsigmoid(gate.double() + 4.0) if gated else None
    ref = chunked_delta_rule(l2norm(q.double()), l2norm(k.double()), v.double(), torch.sigmoid(beta.double()), g)
    out = chunk_delta_rule(q, k, v, beta, gate if gated else None, gate_bias=4.0)
    assert torch.isfinite(out).all()
    assert _rel(out, ref) < REL_L2["delta"]
