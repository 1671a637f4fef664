"""``bench.kerneldev.sweeps.delta_rule`` on the CPU: its shapes are the DeltaNet tasks' GPU shapes,
every distinct kernel layout it will time computes the gated delta rule (interpreter), and it
refuses to run without CUDA."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from bench.kerneldev.sweeps import delta_rule as sweep
from hawkeye_env.tasks.registry import get_task
from hawkeye_env.tasks.shared.delta_rule_common import chunked_delta_rule, l2norm

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
# Warps and stages do not change what the interpreter computes: one configuration per layout.
LAYOUTS = {(c["two_pass"], c["block_v"], c["out_block_v"] if c["two_pass"] else 0): c for c in sweep.CONFIGS}


def test_shapes_are_the_tasks_gpu_shapes():
    tasks = {"delta_net": "delta_net_fwd_bf16", "gated_delta_net": "gated_delta_net_fwd_bf16"}
    for label, b, h, t, d, _ in sweep.SHAPES:
        assert get_task(tasks[label]).gpu_shapes[0] == {"B": b, "H": h, "T": t, "D": d}


@pytest.mark.parametrize("cfg", LAYOUTS.values(), ids=lambda c: "-".join(map(str, c.values())))
def test_every_layout_computes_the_gated_delta_rule(cfg):
    q, k, v, beta, gate = sweep.inputs(1, 2, 130, 64, True, DEVICE)  # 3 chunks, the last partial
    ref = chunked_delta_rule(l2norm(q.double()), l2norm(k.double()), v.double(), torch.sigmoid(beta.double()),
                             F.logsigmoid(gate.double() + sweep.GATE_BIAS))
    out = sweep.call(cfg, q, k, v, beta, gate).double()
    assert torch.isfinite(out).all()
    assert float((out - ref).norm() / ref.norm()) < sweep.MAX_ERR


def test_sweep_needs_a_gpu(monkeypatch, capsys):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert sweep.main([]) == 2
    assert "CUDA GPU" in capsys.readouterr().err
