"""The chunked PyTorch references of the linear-attention tasks equal their token-by-token
recurrences in float64, at odd lengths (several chunks plus a partial one), several seeds and every
input distribution the judge draws. The chunked forms are what eager and torch.compile time and
what the judge's float64 run uses as the exact reference, so they must be exact math."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from hawkeye_env.judge.shared.inputs import draw_like
from hawkeye_env.tasks.gated_delta_net_fwd_bf16 import task as gated_delta_net_fwd_bf16
from hawkeye_env.tasks.gla_fwd_bf16 import task as gla_fwd_bf16
from hawkeye_env.tasks.shared.delta_rule_common import chunked_delta_rule, l2norm
from hawkeye_env.tasks.simple_gla_fwd_bf16 import task as simple_gla_fwd_bf16
from hawkeye_env.tasks.spec import DISTRIBUTIONS

SEEDS = (0, 1, 2)
SHAPES = ((1, 2, 67, 8), (2, 1, 130, 16))  # (B, H, T, D): T = 1 or 2 chunks of 64 plus a partial one
TOL = 1e-10  # float64 reassociation over a few hundred tokens lands near 1e-15


def _draw(shape, dist, gen):
    return draw_like(torch.empty(shape, dtype=torch.float64), dist, gen).double()


def _rel(a, b):
    return ((a - b).norm() / b.norm()).item()


def recurrent_gla(q, k, v, g):
    """``S_t = diag(exp(g_t)) S_{t-1} + k_t^T v_t``, ``o_t = q_t S_t``; g ``[B, H, T]`` (scalar
    decay, broadcast over channels) or ``[B, H, T, D]`` (per key channel)."""
    b, h, t_len, d = q.shape
    g = g[..., None].expand(b, h, t_len, d) if g.dim() == 3 else g
    state = q.new_zeros(b, h, d, v.shape[-1])
    out = torch.empty_like(v)
    for t in range(t_len):
        state = state * g[:, :, t, :, None].exp() + k[:, :, t, :, None] * v[:, :, t, None, :]
        out[:, :, t] = (q[:, :, t, :, None] * state).sum(-2)
    return out


def recurrent_delta_rule(q, k, v, beta, g):
    """``S_t = exp(g_t) (I - beta_t k_t^T k_t) S_{t-1} + beta_t k_t^T v_t``, ``o_t = q_t S_t``."""
    b, h, t_len, d = q.shape
    state = q.new_zeros(b, h, d, v.shape[-1])
    out = torch.empty_like(v)
    for t in range(t_len):
        kt, bt = k[:, :, t], beta[:, :, t, None, None]
        state = state - bt * kt[..., :, None] * (kt[..., None, :] @ state)
        state = g[:, :, t, None, None].exp() * state + bt * kt[..., :, None] * v[:, :, t, None, :]
        out[:, :, t] = (q[:, :, t, :, None] * state).sum(-2)
    return out


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dist", DISTRIBUTIONS)
@pytest.mark.parametrize("shape", SHAPES)
def test_simple_gla_chunked_equals_recurrence(shape, dist, seed):
    gen = torch.Generator().manual_seed(seed)
    q, k, v = (_draw(shape, dist, gen) for _ in range(3))
    g = F.logsigmoid(_draw(shape[:3], dist, gen) + simple_gla_fwd_bf16.GATE_BIAS)
    ref = recurrent_gla(q, k, v, g)
    assert _rel(simple_gla_fwd_bf16.simple_gla_reference(q, k, v, g), ref) < TOL


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dist", DISTRIBUTIONS)
@pytest.mark.parametrize("shape", SHAPES)
def test_gla_chunked_equals_recurrence(shape, dist, seed):
    gen = torch.Generator().manual_seed(seed)
    q, k, v = (_draw(shape, dist, gen) for _ in range(3))
    g = gla_fwd_bf16.log_decay(_draw(shape, dist, gen))
    ref = recurrent_gla(q, k, v, g)
    assert _rel(gla_fwd_bf16.gla_reference(q, k, v, g), ref) < TOL


@pytest.mark.parametrize("gated", [False, True], ids=["delta_net", "gated_delta_net"])
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dist", DISTRIBUTIONS)
@pytest.mark.parametrize("shape", SHAPES)
def test_delta_rule_chunked_equals_recurrence(shape, dist, seed, gated):
    gen = torch.Generator().manual_seed(seed)
    q, k, v = (_draw(shape, dist, gen) for _ in range(3))
    q, k = l2norm(q), l2norm(k)
    beta = torch.sigmoid(_draw(shape[:3], dist, gen))
    g = F.logsigmoid(_draw(shape[:3], dist, gen) + gated_delta_net_fwd_bf16.GATE_BIAS)
    ref = recurrent_delta_rule(q, k, v, beta, g if gated else torch.zeros_like(g))
    assert _rel(chunked_delta_rule(q, k, v, beta, g if gated else None), ref) < TOL


def test_delta_rule_recurrence_is_the_delta_rule():
    """One step from a known state: the key's old value is replaced by ``beta`` of the way to v,
    other directions are untouched (guards the test's own recurrence)."""
    d = 4
    k = torch.zeros(1, 1, 2, d, dtype=torch.float64)
    k[..., 0, 0] = 1.0
    k[..., 1, 0] = 1.0
    v = torch.zeros(1, 1, 2, d, dtype=torch.float64)
    v[..., 0, :] = torch.tensor([1.0, 2.0, 3.0, 4.0])
    v[..., 1, :] = torch.tensor([5.0, 6.0, 7.0, 8.0])
    beta = torch.tensor([[[1.0, 0.5]]], dtype=torch.float64)
    out = recurrent_delta_rule(k, k, v, beta, torch.zeros(1, 1, 2, dtype=torch.float64))
    assert torch.allclose(out[0, 0, 0], v[0, 0, 0])
    assert torch.allclose(out[0, 0, 1], 0.5 * v[0, 0, 0] + 0.5 * v[0, 0, 1])
