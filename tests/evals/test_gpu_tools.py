"""The GPU measurement scripts refuse to run without CUDA, with a usage line and exit code 2."""

import pytest
import torch

from evals import correctness_probe, sweep_kernels


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU path")
def test_sweeps_and_probe_need_a_gpu(capsys):
    assert sweep_kernels.main(["gemm"]) == 2
    assert "CUDA GPU" in capsys.readouterr().err
    assert correctness_probe.main(["softmax_fp32"]) == 2
    assert "needs a CUDA GPU" in capsys.readouterr().err


def test_sweep_groups_are_checked():
    assert sweep_kernels.main(["nope"]) == 2
    assert set(sweep_kernels.GROUPS) == {"splitk", "fp4", "fp4small", "fp8", "ws", "gemm"}


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU path")
@pytest.mark.parametrize("name", ["fp8", "fp4", "ws", "attention"])
def test_unit_variant_sweeps_need_a_gpu(name, capsys):
    import importlib

    sweep = importlib.import_module(f"evals.sweeps.{name}")
    assert sweep.main([]) == 2
    assert "CUDA GPU" in capsys.readouterr().err
