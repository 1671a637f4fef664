"""mxfp4_gemm and nvfp4_gemm kernel variants (keywords ``decode``, ``unpack``, ``swap_ab``, ``split_k``,
``expand_scales``): each matches the float64 reference at the units' odd CPU shapes, 2 seeds, with
NaN-poisoned allocations; every decode reproduces every e2m1 code at many scales exactly (an identity
activation makes the GEMM return the decoded weight); bad keyword combinations are refused."""

from __future__ import annotations

import pytest
import torch

from hawkeye_env.judge.parent.decide.correctness import compare
from hawkeye_env.tasks.spec import BF16
from units.lib.index import get_unit, resolve
from units.mxfp4_gemm import kernel as mx_kernel
from units.mxfp4_gemm import reference as mx_ref
from units.mxfp4_gemm.kernel import mxfp4_gemm
from units.nvfp4_gemm import kernel as nv_kernel
from units.nvfp4_gemm import reference as nv_ref
from units.nvfp4_gemm.kernel import nvfp4_gemm

SEEDS = (0, 1)  # two draws per shape, as units.lib.harness.SEEDS
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
KERNELS = {"mxfp4_gemm": mxfp4_gemm, "nvfp4_gemm": nvfp4_gemm}
# Each variant below is the base design (select decode, interleaved join, no swap, no split, one
# scale load per group) with its keywords changed, whatever the units' tuned defaults are.
BASE = {"mxfp4_gemm": mx_kernel.BASE_VARIANT, "nvfp4_gemm": nv_kernel.BASE_VARIANT}
# Small tiles so the CPU shapes (K = 96 or 80, and 320) span several K steps, a partial last step,
# split-K runs of unequal length and empty ones (split_k above the number of K steps).
VARIANTS = {
    "bits": {"decode": "bits"},
    "two_dot": {"unpack": "two_dot"},
    "swap_ab": {"swap_ab": True, "block_m": 16, "block_n": 64},
    "swap_ab,two_dot,bits,block_k=64": {"swap_ab": True, "unpack": "two_dot", "decode": "bits", "block_m": 16,
                                        "block_k": 64},
    "expand_scales,two_dot,block_k=64": {"expand_scales": True, "unpack": "two_dot", "block_k": 64},
    "expand_scales,swap_ab,split_k=2": {"expand_scales": True, "swap_ab": True, "split_k": 2, "block_k": 32},
    "split_k=3,block_k=32": {"split_k": 3, "block_k": 32},
    "split_k=8,block_k=128": {"split_k": 8, "block_k": 128, "block_m": 32, "block_n": 32},
    # "lut" runs its PTX block on a GPU and Triton's integer decode under the interpreter; both load the
    # A tile whole and split it into even and odd K columns in registers.
    "lut,split_k=2,block_k=32": {"decode": "lut", "unpack": "two_dot", "expand_scales": True, "split_k": 2,
                                 "block_k": 32},
    "lut,block_k=64": {"decode": "lut", "unpack": "two_dot", "expand_scales": True, "block_k": 64},
}
MX_ONLY = {
    "dot_scaled": {"decode": "dot_scaled"},
    "dot_scaled,swap_ab,split_k=4,block_k=64": {"decode": "dot_scaled", "swap_ab": True, "split_k": 4,
                                                "block_k": 64, "block_m": 16},
}
CASES = [(u, v) for u in KERNELS for v in VARIANTS] + [("mxfp4_gemm", v) for v in MX_ONLY]


@pytest.mark.parametrize(("unit_name", "variant"), CASES, ids=[f"{u}-{v}" for u, v in CASES])
def test_variant_matches_float64_reference(unit_name, variant, poisoned):
    unit = get_unit(unit_name)
    options = {**BASE[unit_name], **{**VARIANTS, **MX_ONLY}[variant]}
    failures = []
    for shape in unit.cpu_shapes:
        for seed in SEEDS:
            inputs = resolve(unit.make_inputs)(shape, DEVICE, seed)
            ref = resolve(unit.reference)(*inputs, out_dtype=torch.float64)
            result = compare(KERNELS[unit_name](*inputs, **options), ref, torch.bfloat16, BF16, compute_device=DEVICE)
            if not result["ok"]:
                failures.append(f"{shape} seed {seed}: {result['reason']}")
    assert not failures, f"{unit_name} {variant}:\n" + "\n".join(failures)


def _identity(k: int) -> torch.Tensor:
    return torch.eye(k, dtype=torch.bfloat16, device=DEVICE)


# On the H200 (Triton 3.6, 2026-12-03) tl.dot_scaled's upcast returns 0 for 0.5 * 2^-27 (e8m0 code 100),
# which the bf16 decodes hold; strict, so the mark goes when Triton changes.
DOT_SCALED_ON_GPU = pytest.mark.xfail(DEVICE == "cuda", strict=True,
                                      reason="tl.dot_scaled flushes values near 2^-28 on sm_90 (Triton 3.6)")


@pytest.mark.parametrize("options", [{"decode": "select"}, {"decode": "bits"},
                                     pytest.param({"decode": "dot_scaled"}, marks=DOT_SCALED_ON_GPU),
                                     {"decode": "bits", "swap_ab": True, "unpack": "two_dot", "block_m": 32},
                                     {"decode": "lut", "unpack": "two_dot", "expand_scales": True}])
def test_mxfp4_decodes_every_code_exactly(options):
    """``eye(K) @ B`` is B itself: all 16 codes (rows cycle through them) at e8m0 codes 100..163,
    which cover 2^-27 .. 2^36 (the "bits" decode's multiplier reaches 2^50)."""
    k, n = 128, 16
    codes = (torch.arange(k)[:, None] + torch.arange(n)[None, :]) % 16
    packed = mx_ref.pack_nibbles(codes.to(torch.uint8)).to(DEVICE)
    scales = (100 + torch.arange(k // 32 * n).reshape(k // 32, n)).to(torch.uint8).to(DEVICE)
    out = mxfp4_gemm(_identity(k), packed, scales, **{**BASE["mxfp4_gemm"], **options})
    assert torch.equal(out.double(), mx_ref.dequantize_mxfp4(packed, scales))


@pytest.mark.parametrize("options", [{"decode": "select"}, {"decode": "bits"},
                                     {"decode": "bits", "swap_ab": True, "unpack": "two_dot", "block_m": 32},
                                     {"decode": "lut", "unpack": "two_dot", "expand_scales": True}])
def test_nvfp4_decodes_every_code_exactly(options):
    """``eye(K) @ B`` with a unit tensor scale is B itself: all 16 codes at e4m3 block scales spanning
    subnormal 2^-9 to 448 (e2m1 times e4m3 has at most 4 significant bits: exact in bf16)."""
    k, n = 64, 16
    codes = (torch.arange(k)[:, None] + 3 * torch.arange(n)[None, :]) % 16
    packed = nv_ref.pack_nibbles(codes.to(torch.uint8)).to(DEVICE)
    scale_bits = torch.tensor([1, 9, 50, 56, 63, 64, 100, 126] * (k // 16 * n // 8), dtype=torch.uint8)
    scales = scale_bits.reshape(k // 16, n).view(torch.float8_e4m3fn).to(DEVICE)
    tensor_scale = torch.ones(1, dtype=torch.float32, device=DEVICE)
    out = nvfp4_gemm(_identity(k), packed, scales, tensor_scale, **{**BASE["nvfp4_gemm"], **options})
    assert torch.equal(out.double(), nv_ref.dequantize_nvfp4(packed, scales, tensor_scale))


@pytest.mark.parametrize(("unit_name", "options", "match"), [
    ("mxfp4_gemm", {"decode": "table"}, "decode must be one of"),
    ("mxfp4_gemm", {"decode": "lut"}, "needs unpack='two_dot'"),
    ("nvfp4_gemm", {"decode": "lut", "unpack": "two_dot", "expand_scales": True, "swap_ab": True},
     "swap_ab=False"),
    ("mxfp4_gemm", {"unpack": "interleave"}, "unpack one of"),
    ("mxfp4_gemm", {"split_k": 0}, "split_k >= 1"),
    ("mxfp4_gemm", {"decode": "dot_scaled", "unpack": "two_dot"}, "do not apply"),
    ("mxfp4_gemm", {"decode": "dot_scaled", "expand_scales": True}, "do not apply"),
    ("nvfp4_gemm", {"decode": "dot_scaled"}, "decode must be one of"),
    ("nvfp4_gemm", {"unpack": "two_dot", "block_k": 16}, "must be >= 32"),
])
def test_bad_variant_keywords_are_refused(unit_name, options, match):
    unit = get_unit(unit_name)
    inputs = resolve(unit.make_inputs)(unit.cpu_shapes[0], DEVICE, 0)
    with pytest.raises(ValueError, match=match):
        KERNELS[unit_name](*inputs, **{**BASE[unit_name], **options})
