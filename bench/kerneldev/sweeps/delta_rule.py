"""H200 sweep of the (gated) delta rule (``units/chunked_scan/delta_rule.py``). CUDA only.

    python -m bench.kerneldev.sweeps.delta_rule [--budget-s 240] [--only gated_delta_net] [--rounds 3]

Run from the repository root. At the DeltaNet and Gated DeltaNet task shape (B8 H16 T2048 D128)
it times FLA's ``chunk_delta_rule`` / ``chunk_gated_delta_rule`` (the tasks' ``fla`` baseline:
sigmoid and logsigmoid of the raw inputs included; its absence is an ``unavailable`` row), the
task's expert (``chunk_delta_rule`` with its defaults) and CONFIGS: the WY kernels' warps, the
fused walk and the two-pass form (``delta_rule_two_pass.py``) at other value blocks, warps and
stages. Before that, ``profile`` rows give every CUDA kernel's device time per call of FLA and
of the expert (``torch.profiler``, ten calls), which says which part of each loses the time, and
``part`` rows time the WY factors alone at each warp pair of ``WY_PARTS``.

Each configuration is checked once against the float32 chunked reference (relative L2 under
``MAX_ERR``) and dropped if it fails to compile, run or match; then every runner is timed
``--rounds`` times interleaved (``bench.kerneldev.sweeps.harness.check_then_time``), with ``tbps``:
q, k, v, o, beta and gate bytes over the median, and ``vs_fla`` (or ``vs_expert`` without FLA).
"""

from __future__ import annotations

import collections

import torch
import torch.nn.functional as F

from bench.kerneldev.sweeps.harness import check_then_time, median_ms_and_cv, print_row, sweep_main
from hawkeye_env.tasks.shared.delta_rule_common import chunked_delta_rule, fla_delta_rule, l2norm
from units.chunked_scan import delta_rule, delta_rule_wy

# (label, B, H, T, D, gated): the delta_net_fwd_bf16 and gated_delta_net_fwd_bf16 shape.
SHAPES = (
    ("delta_net", 8, 16, 2048, 128, False),
    ("gated_delta_net", 8, 16, 2048, 128, True),
)
GATE_BIAS = 4.0  # the gated task's logsigmoid offset
KNOBS = ("two_pass", "block_v", "num_warps", "num_stages", "out_block_v", "out_warps", "wy_warps", "apply_warps")
# Compiled for sm_90 with Triton 3.6 on a host without a GPU (D = 128; ptxas spill bytes per
# thread, gated unless said): the fused walk (64 value columns, 4 warps) 255 registers and 4.8 KB of
# spills, 8 warps 0.9 KB, 32 columns at 8 warps 0.3 KB; the WY inverse 0.4 KB at 2 or 4 warps
# (ungated 16 B), 2.3 KB at 1, the kernel applying it 1.9 KB at 4 warps and 0.1 KB at 8; the
# two-pass state walk nothing at 32 columns and 8 warps, its output kernel nothing at 64 columns
# and 8 warps.
CONFIGS = tuple(dict(zip(KNOBS, row)) for row in (
    (False, 64, 4, 2, 64, 4, 1, 4),
    (False, 64, 4, 2, 64, 4, 2, 4),
    (False, 64, 4, 2, 64, 4, 4, 4),
    (False, 64, 4, 2, 64, 4, 2, 8),
    (False, 64, 4, 3, 64, 4, 2, 4),
    (False, 64, 4, 1, 64, 4, 2, 4),
    (False, 32, 4, 2, 64, 4, 2, 4),
    (True, 64, 4, 2, 64, 4, 2, 4),
    (True, 32, 4, 2, 64, 4, 2, 4),
))
# The WY factors alone: (inverse warps, apply warps).
WY_PARTS = ((1, 4), (2, 4), (4, 4), (2, 8))
MAX_ERR = 1e-2  # the tasks' bf16 tolerance is near 6e-3 against float64 (delta_rule_common)
BUDGET_S = 240.0
PROFILE_CALLS = 10


def call(cfg: dict, q, k, v, beta, gate) -> torch.Tensor:
    """The expert's ``chunk_delta_rule`` with configuration ``cfg``; ``gate`` None for DeltaNet."""
    return delta_rule.chunk_delta_rule(q, k, v, beta, gate, gate_bias=GATE_BIAS, **cfg)


def inputs(b: int, h: int, t: int, d: int, gated: bool, device: str) -> list:
    """The tasks' inputs: q, k, v bf16 ``[B, H, T, D]`` and raw beta, gate float32 ``[B, H, T]``
    (gate None for DeltaNet)."""
    gen = torch.Generator(device=device).manual_seed(0)
    q, k, v = (torch.randn(b, h, t, d, device=device, generator=gen).to(torch.bfloat16) for _ in range(3))
    beta, gate = (torch.randn(b, h, t, device=device, generator=gen) for _ in range(2))
    return [q, k, v, beta, gate if gated else None]


def fixed_runners(device: str) -> tuple[dict, str]:
    """``({name: fn(q, k, v, beta, gate)}, reference)``: FLA when it runs, and the expert."""
    runners, reference = {}, "expert"
    try:
        def fla(q, k, v, beta, gate):
            g = None if gate is None else F.logsigmoid(gate.float() + GATE_BIAS)
            return fla_delta_rule(q, k, v, torch.sigmoid(beta.float()), g)

        probe = [torch.randn(1, 1, 64, 64, device=device, dtype=torch.bfloat16) for _ in range(3)]
        fla(*probe, torch.randn(1, 1, 64, device=device), None)
        runners["fla"], reference = fla, "fla"
    except Exception as exc:  # noqa: BLE001 - FLA missing or unable to run: reported, not hidden
        print_row(kind="unavailable", cfg="fla", why=f"{type(exc).__name__}: {exc}"[:300])
    runners["expert"] = lambda *xs: call({}, *xs)
    return runners, reference


def profile_kernels(label: str, name: str, fn, xs: list) -> None:
    """One ``profile`` row: each CUDA kernel's device microseconds per call of ``fn(*xs)``."""
    from torch.profiler import ProfilerActivity, profile

    fn(*xs)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(PROFILE_CALLS):
            fn(*xs)
        torch.cuda.synchronize()
    per_kernel: dict[str, float] = collections.defaultdict(float)
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA:
            per_kernel[event.name[:90]] += event.device_time / PROFILE_CALLS
    ranked = dict(sorted(per_kernel.items(), key=lambda kv: -kv[1]))
    print_row(kind="profile", shape=label, cfg=name, us_per_call=ranked, total_us=sum(ranked.values()))


def time_parts(label: str, xs: list) -> None:
    """``part`` rows: the WY factors alone in each of ``WY_PARTS`` (on copies of the inputs, which
    the timing refills)."""
    _, k, v, beta, gate = (None if x is None else x.clone() for x in xs)
    gated = gate is not None
    for warps, apply_warps in WY_PARTS:
        def wy(k, v, beta, gate, warps=warps, apply_warps=apply_warps):
            return delta_rule_wy.wy_factors(k, v, beta, gate if gated else beta, gated, GATE_BIAS, num_warps=warps,
                                            apply_warps=apply_warps)
        ms, cv = median_ms_and_cv(wy, [k, v, beta, gate])
        print_row(kind="part", shape=label, cfg={"wy_warps": warps, "apply_warps": apply_warps}, ms=ms, cv=cv)


def sweep_shape(label: str, b: int, h: int, t: int, d: int, gated: bool, rounds: int, deadline: float) -> None:
    xs = inputs(b, h, t, d, gated, "cuda")
    q, k, v, beta, gate = xs
    g = F.logsigmoid(gate + GATE_BIAS) if gated else None
    expected = chunked_delta_rule(l2norm(q.float()), l2norm(k.float()), v.float(), torch.sigmoid(beta), g)
    fixed, reference = fixed_runners("cuda")
    for name, fn in fixed.items():
        try:
            profile_kernels(label, name, fn, xs)
        except Exception as exc:  # noqa: BLE001 - a profiler failure is a row; the timing goes on
            print_row(kind="error", shape=label, cfg=f"profile {name}", error=f"{type(exc).__name__}: {exc}"[:400])
    time_parts(label, xs)
    tb = (4 * b * h * t * d * 2 + (2 if gated else 1) * b * h * t * 4) / 1e12
    check_then_time(label, xs, expected, fixed, CONFIGS, call, rounds=rounds, deadline=deadline, max_err=MAX_ERR,
                    rate=lambda ms: {"tbps": tb / ms * 1e3}, reference=reference)


def main(argv: list[str] | None = None) -> int:
    return sweep_main(argv, __doc__, "delta-rule", CONFIGS, SHAPES, sweep_shape, BUDGET_S)


if __name__ == "__main__":
    raise SystemExit(main())
