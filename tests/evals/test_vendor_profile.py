"""``bench.kerneldev.vendor_profile`` on the CPU: pairs are checked against the task's declared vendor
baselines before anything runs, it refuses to run without CUDA, and a pair is built and warmed up
from the same runners ``bench.kerneldev.launch_share`` times."""

from __future__ import annotations

import pytest
import torch

from bench.kerneldev import vendor_profile


def test_pairs_name_a_declared_vendor_baseline():
    assert vendor_profile.parse_pairs(["linear_decode_bf16:cublas"]) == [("linear_decode_bf16", "cublas")]
    with pytest.raises(ValueError, match="expected TASK:VENDOR"):
        vendor_profile.parse_pairs(["linear_decode_bf16"])
    with pytest.raises(ValueError, match="no vendor baseline 'fla'.*cublas"):
        vendor_profile.parse_pairs(["linear_decode_bf16:fla"])
    with pytest.raises(KeyError, match="unknown task"):
        vendor_profile.parse_pairs(["no_such_task:cublas"])


def test_bad_pair_and_missing_gpu_are_reported(monkeypatch, capsys):
    assert vendor_profile.main(["rmsnorm_bf16:cublas"]) == 2  # rmsnorm declares no vendor baseline
    assert "no vendor baseline" in capsys.readouterr().err
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert vendor_profile.main(["linear_decode_bf16:cublas"]) == 2
    assert "CUDA GPU" in capsys.readouterr().err


def test_prepare_builds_and_warms_the_expert_and_the_vendor(monkeypatch):
    from bench.kerneldev import launch_share

    seen = []
    real = launch_share.runners

    def counted(name, fn):
        def call(*args):
            seen.append(name)
            return fn(*args)
        return call

    def counting(task, device, vendors=None):
        fns, unavailable, inputs, shape = real(task, device, vendors)
        return {name: counted(name, fn) for name, fn in fns.items()}, unavailable, inputs, shape

    monkeypatch.setattr(vendor_profile, "runners", counting)
    # On the CPU at the GPU shape (M=16, N=6144, K=4096), one warm-up call of each runner.
    monkeypatch.setattr(vendor_profile, "WARMUP_CALLS", 1)
    (task, vendor, pair, inputs), = vendor_profile.prepare([("linear_decode_bf16", "cublas")], device="cpu")
    assert (task, vendor, list(pair)) == ("linear_decode_bf16", "cublas", ["expert", "cublas"])
    assert seen == ["expert", "cublas"]  # only the named vendor baseline is built and warmed
    eager = real("linear_decode_bf16", "cpu")[0]["eager"]
    torch.testing.assert_close(pair["cublas"](*inputs), eager(*inputs))


def test_a_vendor_baseline_that_cannot_run_stops_prepare(monkeypatch):
    from hawkeye_env.judge.sandboxed.baseline import serve as baselines

    monkeypatch.setattr(baselines, "resolve_vendor", lambda target: (_ for _ in ()).throw(ImportError("no lib")))
    with pytest.raises(RuntimeError, match="linear_decode_bf16:cublas cannot run here: ImportError: no lib"):
        vendor_profile.prepare([("linear_decode_bf16", "cublas")], device="cpu")
