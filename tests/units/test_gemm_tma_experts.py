"""The TMA GEMM experts (gemm_8192_bf16, gemm_narrow_bf16) take the warp_specialization unit's
named candidate on operands TMA can describe and the grouped GEMM on any others; both paths
match the float64 product under the interpreter (CPU) or on the GPU."""

from __future__ import annotations

import importlib

import pytest
import torch

from hawkeye_env.judge.parent.decide.correctness import compare
from hawkeye_env.tasks.spec import BF16
from units.warp_specialization.kernel import CANDIDATES

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@pytest.mark.parametrize("task", ["gemm_8192_bf16", "gemm_narrow_bf16"])
@pytest.mark.parametrize("m,n,k,tma", [(136, 264, 72, True), (67, 130, 40, False)])
def test_tma_expert_dispatch_and_result(task, m, n, k, tma, monkeypatch, poisoned):
    expert = importlib.import_module(f"hawkeye_env.tasks.{task}.solution")
    assert expert.CONFIG in CANDIDATES
    calls = []
    for name in ("ws_matmul", "grouped_matmul"):
        real = getattr(expert, name)
        monkeypatch.setattr(expert, name, lambda *a, _n=name, _f=real, **kw: calls.append((_n, a[2:])) or _f(*a, **kw))
    g = torch.Generator().manual_seed(m)
    a = torch.randn(m, k, generator=g).to(torch.bfloat16).to(DEVICE)
    b = torch.randn(k, n, generator=g).to(torch.bfloat16).to(DEVICE)
    out = expert.ModelNew()(a, b)
    assert calls == ([("ws_matmul", (expert.CONFIG,))] if tma else [("grouped_matmul", ())])
    verdict = compare(out, a.double() @ b.double(), torch.bfloat16, BF16)
    assert verdict["ok"], f"{task} {(m, n, k)}: {verdict['reason']}"
