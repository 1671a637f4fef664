"""H200 sweep of the flash-attention prefill kernel (``units/online_softmax/attention.py``). CUDA only.

    python -m bench.kerneldev.sweeps.attention [--budget-s 240] [--only causal] [--rounds 3]

Run from the repository root. It times the kernel's knobs at the attention tasks' GPU shapes (B4
H32 S4096 D128: non-causal, causal, and causal grouped-query with 8 KV heads) against SDPA-cuDNN
and flash SDPA (the kernel's defaults are the fastest of its 2026-11-30 run, BENCHMARKS.md's
Attention tables): tiles (``block_m`` x
``block_n``), warps, stages, the scale folded into the exponent with the accumulator rescale inside
the MMA (``fold_scale``), and TMA tensor-descriptor loads and stores (``use_tma``; compiled for
sm_90 with Triton 3.6 they cut the 128x64 tile from 186 to 138 registers per thread, and let a
128x128 tile fit in 188 without spills). Warp specialization is left out: Triton 3.6 leaves this
loop unsplit at 8 warps and fails to compile it at 4. The ``decode`` shape (attention_decode_bf16:
B16 Hq32 Hkv8, one query token against 8192 cached keys) sweeps ``flash_decode``'s key tile, launch
and number of split programs (``DECODE_CONFIGS`` over ``DECODE_BASE``); its rows also carry
``kv_gbps``, the K and V bytes over the time, the bound of a decode step.

Every configuration and SDPA's cuDNN and flash back-ends are timed ``--rounds`` times interleaved
(A, B, C, ..., A, B, C, ...) with the judge's ``time_callable`` (L2 flushed, inputs refilled, 30
iterations), so drift shows as spread between rounds. A configuration is checked once against the
flash back-end's output (relative L2; two bf16 roundings give a few 1e-3) and dropped if it fails
to compile, run or match. Budget: no new shape starts after ``--budget-s`` seconds.

One JSON line each: ``{"kind": "env"}``; ``{"kind": "error", "shape", "cfg", "error"}``;
``{"kind": "time", "shape", "cfg", "round", "ms", "cv", "tflops"}`` (``cfg`` is a dict of knobs, or
``"sdpa_cudnn"`` / ``"sdpa_flash"``); ``{"kind": "summary", "shape", "cfg", "median_ms", "tflops",
"vs_cudnn", "vs_flash", "err"}`` per configuration; ``{"kind": "skipped"}``; ``{"kind": "done"}``.
"""

from __future__ import annotations

import json
import statistics

import torch

from bench.kerneldev.sweeps.harness import print_row, relative_error, sweep_main
from hawkeye_env.judge.sandboxed.common.timing import time_callable
from hawkeye_env.tasks.shared.attention_common import sdpa
from units.online_softmax import attention

ITERS, RETRIES = 30, 1
# (label, B, Hq, Hkv, S, D, causal): the attention tasks' GPU shapes.
SHAPES = (
    ("causal", 4, 32, 32, 4096, 128, True),
    ("noncausal", 4, 32, 32, 4096, 128, False),
    ("gqa_causal", 4, 32, 8, 4096, 128, True),
    ("decode", 16, 32, 8, 8192, 128, None),  # attention_decode_bf16: one query token, S = KV length
)
# Every configuration overrides BASE, a 128x64 pointer tile, so a row's ``cfg`` keeps its meaning
# whatever the kernel's defaults are (the defaults are the third from last). BASE first; every other
# entry changes one to three knobs.
BASE = {"block_m": 128, "block_n": 64, "num_warps": 8, "num_stages": 3, "use_tma": False, "fold_scale": False}
CONFIGS = (
    {},
    {"use_tma": True},
    {"block_n": 128},
    {"block_n": 128, "use_tma": True},
    {"block_n": 128, "use_tma": True, "num_stages": 2},
    {"block_n": 64, "use_tma": True, "num_stages": 4},
    {"block_m": 64, "block_n": 64, "num_warps": 4, "num_stages": 3},
    {"block_m": 64, "block_n": 64, "num_warps": 4, "num_stages": 3, "use_tma": True},
    {"block_m": 128, "block_n": 32, "num_warps": 4, "num_stages": 4, "use_tma": True},
    {"block_m": 256, "block_n": 64, "num_warps": 8, "num_stages": 2, "use_tma": True},
    {"fold_scale": True},
    {"fold_scale": True, "use_tma": True},
    {"fold_scale": True, "use_tma": True, "block_n": 128},
)
# flash_decode's knobs (the ``decode`` shape): the split kernel's key tile, launch and how many
# split programs in all (units/online_softmax/attention.py: 64 keys, 4 warps, 3 stages, 8 per SM of
# 132). DECODE_BASE first; the others change one or two knobs.
DECODE_BASE = {"block_n": 64, "num_warps": 4, "num_stages": 3, "target_programs": 8 * 132}
DECODE_CONFIGS = (
    {},
    {"block_n": 128},
    {"block_n": 32},
    {"num_warps": 2},
    {"num_warps": 8, "block_n": 128},
    {"num_stages": 2},
    {"num_stages": 4},
    {"target_programs": 4 * 132},
    {"target_programs": 16 * 132},
    {"target_programs": 16 * 132, "block_n": 32},
    {"target_programs": 4 * 132, "block_n": 128, "num_stages": 4},
)
BUDGET_S = 240.0


def _flops(b: int, hq: int, s: int, d: int, causal: bool) -> float:
    return 4.0 * b * hq * s * s * d / (2 if causal else 1)


def _runners(b: int, hq: int, hkv: int, s: int, d: int, causal: bool | None):
    """Inputs, SDPA's two back-ends, and ``(configs, run(cfg, q, k, v))`` for a prefill shape, or
    for ``causal=None`` the decode shape (one query token against an ``s``-key cache)."""
    g = torch.Generator(device="cuda").manual_seed(0)
    q = torch.randn(b, hq, 1 if causal is None else s, d, device="cuda", dtype=torch.bfloat16, generator=g)
    k, v = (torch.randn(b, hkv, s, d, device="cuda", dtype=torch.bfloat16, generator=g) for _ in range(2))
    mask = bool(causal)
    vendors = {
        "sdpa_cudnn": lambda q, k, v: sdpa("cudnn", q, k, v, mask),
        "sdpa_flash": lambda q, k, v: sdpa("flash", q, k, v, mask),
    }
    if causal is None:
        return (q, k, v), vendors, DECODE_CONFIGS, lambda cfg, q, k, v: attention.flash_decode(
            q, k, v, **{**DECODE_BASE, **cfg})
    return (q, k, v), vendors, CONFIGS, lambda cfg, q, k, v: attention.flash_attention(
        q, k, v, causal, **{**BASE, **cfg})


def sweep_shape(label: str, b: int, hq: int, hkv: int, s: int, d: int, causal: bool | None, rounds: int,
                deadline: float | None = None) -> None:
    inputs, vendors, configs, run = _runners(b, hq, hkv, s, d, causal)
    expected = vendors["sdpa_flash"](*inputs)
    runners: dict[str, tuple] = {name: (fn, None) for name, fn in vendors.items()}
    for cfg in configs:
        name = json.dumps(cfg, sort_keys=True)
        try:
            out = run(cfg, *inputs)
            torch.cuda.synchronize()
            err = relative_error(out, expected)
            if not err < 2e-2:
                raise ValueError(f"relative L2 {err:.3g} from SDPA flash")
        except Exception as exc:  # noqa: BLE001 - a configuration that cannot run is reported
            print_row(kind="error", shape=label, cfg=cfg, error=f"{type(exc).__name__}: {exc}"[:400])
            continue
        runners[name] = ((lambda q, k, v, cfg=cfg: run(cfg, q, k, v)), err)
    times: dict[str, list[float]] = {name: [] for name in runners}
    flops = 4.0 * b * hq * s * d if causal is None else _flops(b, hq, s, d, causal)
    kv_gb = 2.0 * 2 * b * hkv * s * d / 1e9  # K and V, bf16: what bounds decode
    for r in range(rounds):
        for name, (fn, _) in runners.items():
            t = time_callable(fn, list(inputs), ITERS, RETRIES, seed=r)
            times[name].append(t["median_ms"])
            cfg = json.loads(name) if name.startswith("{") else name
            print_row(kind="time", shape=label, cfg=cfg, round=r, ms=t["median_ms"], cv=t["cv"],
                 tflops=flops / t["median_ms"] / 1e9, kv_gbps=kv_gb / t["median_ms"] * 1e3)
    cudnn, flash = statistics.median(times["sdpa_cudnn"]), statistics.median(times["sdpa_flash"])
    for name, (_, err) in runners.items():
        ms = statistics.median(times[name])
        cfg = json.loads(name) if name.startswith("{") else name
        print_row(kind="summary", shape=label, cfg=cfg, median_ms=ms, tflops=flops / ms / 1e9,
             kv_gbps=kv_gb / ms * 1e3, vs_cudnn=cudnn / ms, vs_flash=flash / ms, err=err)


def main(argv: list[str] | None = None) -> int:
    return sweep_main(argv, __doc__, "attention", CONFIGS + DECODE_CONFIGS, SHAPES, sweep_shape, BUDGET_S)


if __name__ == "__main__":
    raise SystemExit(main())
