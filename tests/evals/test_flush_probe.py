"""``bench.kerneldev.flush_probe`` off the GPU: the L2 states it times and its refusals."""

from __future__ import annotations

import pytest
import torch

from bench.kerneldev import flush_probe


def test_each_mode_is_a_callable_and_an_unknown_one_is_refused():
    for mode in flush_probe.FLUSH_MODES:
        flush_probe.flusher(mode, 1 << 12, device="cpu")()  # runs on any device; the L2 is the GPU's
    with pytest.raises(ValueError, match="unknown flush mode"):
        flush_probe.flusher("cold", 1 << 12, device="cpu")


def test_without_a_gpu_or_with_a_bad_pair_it_exits_2(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert flush_probe.main(["linear_decode_bf16:cublas", "--out", str(tmp_path / "p.json")]) == 2
    assert "CUDA GPU" in capsys.readouterr().err
    assert flush_probe.main(["linear_decode_bf16:cudnn", "--out", str(tmp_path / "p.json")]) == 2
    assert "no vendor baseline" in capsys.readouterr().err
    assert not (tmp_path / "p.json").exists()
