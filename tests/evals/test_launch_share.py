"""``bench.kerneldev.launch_share`` on the CPU: it refuses to run without CUDA, and for a task it builds the
runners the judge would time (expert with the reference's parameters, eager reference, every vendor
baseline) from the task's own files."""

from __future__ import annotations

import torch

from bench.kerneldev import launch_share


def test_needs_a_gpu(monkeypatch, capsys):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert launch_share.main(["rmsnorm_bf16"]) == 2
    assert "CUDA GPU" in capsys.readouterr().err


def test_runners_are_the_expert_the_reference_and_the_vendor_baselines():
    # On the CPU at the GPU shape (M=16, N=6144, K=4096): nothing is timed, eager and cuBLAS are called.
    fns, unavailable, inputs, shape = launch_share.runners("linear_decode_bf16", device="cpu")
    assert set(fns) == {"expert", "eager", "cublas"} and unavailable == {}
    assert shape == {"M": 16, "N": 6144, "K": 4096}
    assert [tuple(x.shape) for x in inputs] == [(16, 4096)]
    expert, eager = fns["expert"], fns["eager"]
    assert type(expert).__name__ == "ModelNew" and type(eager).__name__ == "Model"
    assert torch.equal(expert.weight, eager.weight)  # the reference's (redrawn) parameters were loaded
    torch.testing.assert_close(fns["cublas"](*inputs), eager(*inputs))


def test_a_vendor_baseline_that_cannot_run_is_reported(monkeypatch):
    from hawkeye_env.judge.sandboxed.baseline import serve as baselines

    monkeypatch.setattr(baselines, "resolve_vendor", lambda target: (_ for _ in ()).throw(ImportError("no lib")))
    fns, unavailable, _, _ = launch_share.runners("linear_decode_bf16", device="cpu")
    assert set(fns) == {"expert", "eager"}
    assert unavailable == {"cublas": "ImportError: no lib"}



def test_runners_build_only_the_vendor_baselines_asked_for(monkeypatch):
    from hawkeye_env.judge.sandboxed.baseline import serve as baselines

    resolved = []
    real = baselines.resolve_vendor
    monkeypatch.setattr(baselines, "resolve_vendor", lambda target: resolved.append(target) or real(target))
    fns, unavailable, _, _ = launch_share.runners("linear_decode_bf16", device="cpu", vendors=[])
    assert set(fns) == {"expert", "eager"} and unavailable == {} and resolved == []
    fns, _, _, _ = launch_share.runners("linear_decode_bf16", device="cpu", vendors=["cublas"])
    assert set(fns) == {"expert", "eager", "cublas"} and len(resolved) == 1
