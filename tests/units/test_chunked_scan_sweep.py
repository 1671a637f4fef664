"""``bench.kerneldev.sweeps.chunked_scan`` and the shared ``check_then_time`` loop on the CPU: every
configuration the sweep will time computes the scan (interpreter, NaN-poisoned allocations), its
shapes are the tasks' GPU shapes, it refuses to run without CUDA, and the loop drops failing
configurations, times the rest interleaved and reports medians, ratios and the fastest."""

from __future__ import annotations

import json
import time

import pytest
import torch

from bench.kerneldev.sweeps import chunked_scan
from bench.kerneldev.sweeps.harness import check_then_time
from hawkeye_env.tasks.registry import get_task
from units.chunked_scan import kernel

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def test_shapes_are_the_tasks_gpu_shapes():
    tasks = {"long": "simple_gla_long_bf16", "short": "simple_gla_fwd_bf16"}
    for label, b, h, t, d, _ in chunked_scan.SHAPES:
        assert get_task(tasks[label]).gpu_shapes[0] == {"B": b, "H": h, "T": t, "D": d}


@pytest.mark.parametrize("cfg", chunked_scan.CONFIGS, ids=lambda c: "-".join(map(str, c.values())))
def test_every_configuration_computes_the_scan(cfg, poisoned):
    q, k, v, g = chunked_scan.inputs(1, 2, 150, 128, DEVICE)  # 3 chunks, the last partial
    walk = kernel.chunk_simple_gla(q, k, v, g).float()
    out = chunked_scan.call(cfg, q, k, v, g).float()
    assert torch.isfinite(out).all()
    assert float((out - walk).norm() / walk.norm()) < chunked_scan.MAX_ERR


def test_sweep_needs_a_gpu(monkeypatch, capsys):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert chunked_scan.main([]) == 2
    assert "CUDA GPU" in capsys.readouterr().err


def test_check_then_time_drops_failures_and_reports_the_fastest(capsys):
    x = torch.linspace(-1, 1, 64)
    ran = []  # the runner each call came from: its name, or a configuration's "ms"

    def call(cfg, x):
        ran.append(cfg.get("ms"))
        if cfg["mode"] == "raise":
            raise RuntimeError("out of resource: shared memory")
        return x * (2 if cfg["mode"] == "ok" else 3)

    def timer(fn, inputs):  # a runner's time is its tag: 1 ms vendor, 2 ms expert, "ms" for configs
        fn(*inputs)
        return {"vendor": 1.0, "expert": 2.0}.get(ran[-1], ran[-1]), 0.01

    fixed = {"vendor": lambda x: ran.append("vendor") or 2 * x, "expert": lambda x: ran.append("expert") or 2 * x}
    configs = [{"mode": "ok", "ms": 0.5}, {"mode": "raise"}, {"mode": "wrong"}, {"mode": "ok", "ms": 4.0}]
    medians = check_then_time("toy", [x], 2 * x, fixed, configs, call, rounds=2, deadline=time.monotonic() + 60,
                              max_err=1e-3, rate=lambda ms: {"per_s": 1e3 / ms}, reference="vendor", timer=timer)
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    errors = [r for r in rows if r["kind"] == "error"]
    assert [r["cfg"] for r in errors] == [{"mode": "raise"}, {"mode": "wrong"}]
    assert "shared memory" in errors[0]["error"] and "relative L2" in errors[1]["error"]
    ok = [json.dumps(c) for c in (configs[0], configs[3])]
    assert medians == {"vendor": 1.0, "expert": 2.0, ok[0]: 0.5, ok[1]: 4.0}
    timed = [(r["round"], r["cfg"]) for r in rows if r["kind"] == "time"]
    order = ["vendor", "expert", configs[0], configs[3]]
    assert timed == [(0, c) for c in order] + [(1, c) for c in order]  # interleaved rounds
    best = next(r for r in rows if r["kind"] == "best")
    assert best["cfg"] == configs[0] and best["vs_vendor"] == 2.0 and best["vs_expert"] == 4.0
    summary = {json.dumps(r["cfg"]) if isinstance(r["cfg"], dict) else r["cfg"]: r
               for r in rows if r["kind"] == "summary"}
    assert summary["expert"]["vs_vendor"] == 0.5 and summary["vendor"]["per_s"] == 1000.0
    assert summary[ok[1]]["err"] == 0.0


def test_check_then_time_checks_nothing_after_the_deadline(capsys):
    x = torch.ones(4)
    medians = check_then_time("late", [x], x, {"ref": lambda x: x}, [{"a": 1}], lambda cfg, x: x, rounds=1,
                              deadline=time.monotonic() - 1, max_err=1e-3, rate=lambda ms: {},
                              reference="ref", timer=lambda fn, xs: (1.0, 0.0))
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["kind"] for r in rows] == ["skipped", "time", "summary"] and set(medians) == {"ref"}
