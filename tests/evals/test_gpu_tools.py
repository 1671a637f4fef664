"""The GPU measurement scripts refuse to run without CUDA, with a usage line and exit code 2."""

import pytest
import torch

from bench.kerneldev import correctness_probe
from bench.kerneldev.sweeps import splitk


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU path")
def test_sweeps_and_probe_need_a_gpu(capsys):
    assert splitk.main([]) == 2
    assert "CUDA GPU" in capsys.readouterr().err
    assert correctness_probe.main(["softmax_fp32"]) == 2
    assert "needs a CUDA GPU" in capsys.readouterr().err


def test_splitk_sweep_takes_no_arguments_and_covers_every_split():
    assert splitk.main(["nope"]) == 2
    assert {c["split_k"] for c in splitk.CONFIGS} == set(splitk.SPLITS)
    assert len(splitk.CONFIGS) == len(splitk.SPLITS) * len(splitk.TILE_ROWS)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU path")
@pytest.mark.parametrize("name", ["fp8", "fp4", "ws", "attention"])
def test_unit_variant_sweeps_need_a_gpu(name, capsys):
    import importlib

    sweep = importlib.import_module(f"bench.kerneldev.sweeps.{name}")
    assert sweep.main([]) == 2
    assert "CUDA GPU" in capsys.readouterr().err
