"""On a GPU: ``hide_launch`` takes a host launch gap out of the CUDA events (the units harness's
timing), and plain timing keeps it (the judge's)."""

from __future__ import annotations

import time

import pytest
import torch

from hawkeye_env.judge.timing import time_callable

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]


def test_hide_launch_removes_a_host_gap_from_the_events():
    x = torch.randn(1 << 20, device="cuda")

    def fn(t):
        time.sleep(0.002)  # 2 ms of host work before a ~10 us kernel
        return t * 2

    plain = time_callable(fn, [x], iters=10, retries=0, seed=0, keep=0)["median_ms"]
    hidden = time_callable(fn, [x], iters=10, retries=0, seed=0, keep=0, hide_launch=True)["median_ms"]
    assert plain > 1.5
    assert hidden < 0.5
