"""``evals.launch_share`` on the CPU: it refuses to run without CUDA, and for a task it builds the
runners the judge would time (expert with the reference's parameters, eager reference, every vendor
baseline) from the task's own files."""

from __future__ import annotations

import torch

from evals import launch_share


def test_needs_a_gpu(monkeypatch, capsys):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert launch_share.main(["rmsnorm_bf16"]) == 2
    assert "CUDA GPU" in capsys.readouterr().err


def test_runners_are_the_expert_the_reference_and_the_vendor_baselines(monkeypatch):
    # Stay on the CPU: .cuda() is the identity here; shapes are the GPU ones, nothing is run but eager.
    monkeypatch.setattr(torch.nn.Module, "cuda", lambda self, *a, **k: self)
    monkeypatch.setattr(torch.Tensor, "cuda", lambda self, *a, **k: self)
    fns, inputs, shape = launch_share.runners("linear_decode_bf16")
    assert set(fns) == {"expert", "eager", "cublas"}
    assert shape == {"M": 16, "N": 6144, "K": 4096}
    assert [tuple(x.shape) for x in inputs] == [(16, 4096)]
    expert, eager = fns["expert"], fns["eager"]
    assert type(expert).__name__ == "ModelNew" and type(eager).__name__ == "Model"
    assert torch.equal(expert.weight, eager.weight)  # the reference's parameters were loaded
    torch.testing.assert_close(fns["cublas"](*inputs), eager(*inputs))
    fns, _, _ = launch_share.runners("attention_decode_bf16")
    assert set(fns) == {"expert", "eager", "sdpa_cudnn", "sdpa_flash"}
