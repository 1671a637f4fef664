"""``worker_process.deterministic``: the flag judge processes set around candidate calls poisons
fresh allocations as ``torch.use_deterministic_algorithms`` does, without importing inductor."""

from __future__ import annotations

import subprocess
import sys

import torch
import torch.utils.deterministic

from hawkeye_env.judge.sandboxed.common import serve_loop


def test_on_poisons_fresh_allocations_and_off_restores(monkeypatch):
    # what setup_process sets in every judge process
    monkeypatch.setattr(torch.utils.deterministic, "fill_uninitialized_memory", True)
    try:
        serve_loop.deterministic(True)
        assert torch.are_deterministic_algorithms_enabled()
        assert torch.is_deterministic_algorithms_warn_only_enabled()
        assert torch.isnan(torch.empty(64)).all()
        assert (torch.empty(8, dtype=torch.int32) == torch.iinfo(torch.int32).max).all()
    finally:
        serve_loop.deterministic(False)
    assert not torch.are_deterministic_algorithms_enabled()


def test_a_judge_process_does_not_import_inductor():
    code = ("import sys\n"
            "from hawkeye_env.judge.sandboxed.candidate import worker\n"
            "from hawkeye_env.judge.sandboxed.replay import replay\n"
            "from hawkeye_env.judge.sandboxed.common import warmup\n"
            "from hawkeye_env.judge.sandboxed.common.serve_loop import deterministic\n"
            "warmup.warm_host(); deterministic(True); deterministic(False)\n"
            "print(sorted(m for m in ('torch._inductor', 'torch._dynamo') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
