"""fp8_scaled_gemm (all three scalings), mxfp4_gemm, nvfp4_gemm and chunked_scan: every solution and
naive callable against its float64 reference at the units' CPU shapes (odd sizes, T not a multiple
of the chunk), 2 seeds, with NaN-poisoned allocations; fp8_scaled_gemm's accumulation and load
variants (normal and all-positive operands) and their keyword checks; plus round trips of the FP4
encoders and decoders."""

from __future__ import annotations

import pytest
import torch

from hawkeye_env.judge.parent.decide.correctness import compare
from hawkeye_env.tasks.spec import BF16
from units.lib.index import get_unit, resolve
from units.mxfp4_gemm import reference as mx
from units.nvfp4_gemm import reference as nv

SEEDS = (0, 1)  # two draws per shape, as units.lib.harness.SEEDS
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
FP8 = "units.fp8_scaled_gemm."
# (unit, callables under test, reference, make_inputs) for every variant.
VARIANTS = {
    "fp8_per_tensor": ("fp8_scaled_gemm", (FP8 + "kernel:fp8_gemm_per_tensor", FP8 + "naive:fp8_gemm_per_tensor"),
                       FP8 + "reference:fp8_gemm_per_tensor", FP8 + "meta:make_inputs"),
    "fp8_per_row": ("fp8_scaled_gemm", (FP8 + "kernel:fp8_gemm_per_row", FP8 + "naive:fp8_gemm_per_row"),
                    FP8 + "reference:fp8_gemm_per_row", FP8 + "meta:make_inputs_per_row"),
    "fp8_block": ("fp8_scaled_gemm", (FP8 + "kernel:fp8_gemm_block", FP8 + "naive:fp8_gemm_block"),
                  FP8 + "reference:fp8_gemm_block", FP8 + "meta:make_inputs_block"),
}
for _name in ("mxfp4_gemm", "nvfp4_gemm", "chunked_scan"):
    _unit = get_unit(_name)
    VARIANTS[_name] = (_name, (_unit.solution, _unit.naive), _unit.reference, _unit.make_inputs)
CASES = [(variant, fn) for variant, (_, fns, _, _) in VARIANTS.items() for fn in fns]


@pytest.mark.parametrize(("variant", "fn"), CASES, ids=[f"{v}-{f.split('.')[-1]}" for v, f in CASES])
def test_matches_float64_reference(variant, fn, poisoned):
    unit_name, _, reference, make_inputs = VARIANTS[variant]
    failures = []
    for shape in get_unit(unit_name).cpu_shapes:
        for seed in SEEDS:
            inputs = resolve(make_inputs)(shape, DEVICE, seed)
            ref = resolve(reference)(*inputs, out_dtype=torch.float64)
            out = resolve(fn)(*inputs)
            result = compare(out, ref, torch.bfloat16, BF16, compute_device=DEVICE)
            if not result["ok"]:
                failures.append(f"{shape} seed {seed}: {result['reason']}")
    assert not failures, f"{fn}:\n" + "\n".join(failures)


# fp8_scaled_gemm variants (kernel keywords). block_k=32 gives 7 and 10 K tiles at the CPU shapes, so
# promotions fire inside the loop and leave a remainder for the one after it.
FP8_VARIANTS = {
    "promote_every=1": {"promote_every": 1},
    "promote_every=2,block_k=32": {"promote_every": 2, "block_k": 32},
    "promote_every=4,block_k=32": {"promote_every": 4, "block_k": 32},
    "imprecise_acc=0": {"imprecise_acc": 0},
    "imprecise_acc=16,block_k=32": {"imprecise_acc": 16, "block_k": 32},
    "block_k=256,imprecise_acc=128": {"block_k": 256, "imprecise_acc": 128, "num_stages": 3},
    "tma": {"tma": True},
    "tma,promote_every=3,block_k=32": {"tma": True, "promote_every": 3, "block_k": 32},
    "tma,warp_specialize,promote_every=2,block_k=64": {"tma": True, "warp_specialize": True, "num_warps": 4,
                                                        "promote_every": 2, "block_k": 64},
}
FP8_SCALINGS = ("per_tensor", "per_row", "block")


def _fp8_cases():
    for name, options in FP8_VARIANTS.items():
        # Block scales promote every 128 K by construction and take neither accumulation keyword.
        accumulation = "promote_every" in options or "imprecise_acc" in options
        for scaling in FP8_SCALINGS:
            if not (scaling == "block" and (accumulation or options.get("block_k", 128) > 128)):
                yield name, scaling


def _fp8_shapes(options: dict) -> list[dict]:
    """The unit's CPU shapes; TMA needs 16-byte rows, so its K is rounded up to a multiple of 16."""
    shapes = [dict(s) for s in get_unit("fp8_scaled_gemm").cpu_shapes]
    if options.get("tma"):
        for s in shapes:
            s["K"] = -(-s["K"] // 16) * 16
    return shapes


def _positive(inputs: tuple) -> tuple:
    """All-positive operands: |code| is exact in e4m3 and equals quantizing |x| with the same scale."""
    a, b, *scales = inputs
    return (a.float().abs().to(torch.float8_e4m3fn), b.float().abs().to(torch.float8_e4m3fn), *scales)


@pytest.mark.parametrize(("variant", "scaling"), list(_fp8_cases()), ids=[f"{v}-{s}" for v, s in _fp8_cases()])
def test_fp8_variant_matches_float64_reference(variant, scaling, poisoned):
    options = FP8_VARIANTS[variant]
    suffix = "" if scaling == "per_tensor" else f"_{scaling}"
    make_inputs = resolve(f"{FP8}meta:make_inputs{suffix}")
    kernel = resolve(f"{FP8}kernel:fp8_gemm_{scaling}")
    reference = resolve(f"{FP8}reference:fp8_gemm_{scaling}")
    failures = []
    for shape in _fp8_shapes(options):
        for seed in SEEDS:
            normal = make_inputs(shape, DEVICE, seed)
            for dist, inputs in (("normal", normal), ("positive", _positive(normal))):
                ref = reference(*inputs, out_dtype=torch.float64)
                result = compare(kernel(*inputs, **options), ref, torch.bfloat16, BF16, compute_device=DEVICE)
                if not result["ok"]:
                    failures.append(f"{shape} seed {seed} {dist}: {result['reason']}")
    assert not failures, f"{variant} {scaling}:\n" + "\n".join(failures)


@pytest.mark.parametrize(("scaling", "options", "match"), [
    ("block", {"promote_every": 2}, "block scales"),
    ("block", {"imprecise_acc": 64}, "block scales"),
    ("per_tensor", {"imprecise_acc": 256}, "imprecise_acc"),
    ("per_tensor", {"promote_every": -1}, "promote_every"),
    ("per_tensor", {"warp_specialize": True}, "needs tma=True"),
    ("per_tensor", {"tma": True}, "16-byte"),  # K = 200 at the first CPU shape
])
def test_fp8_variant_keywords_are_checked(scaling, options, match):
    suffix = "" if scaling == "per_tensor" else f"_{scaling}"
    inputs = resolve(f"{FP8}meta:make_inputs{suffix}")(get_unit("fp8_scaled_gemm").cpu_shapes[0], DEVICE, 0)
    with pytest.raises(ValueError, match=match):
        resolve(f"{FP8}kernel:fp8_gemm_{scaling}")(*inputs, **options)


def test_poisoning_catches_an_unwritten_row(poisoned):
    unit = get_unit("chunked_scan")
    inputs = resolve(unit.make_inputs)(unit.cpu_shapes[0], DEVICE, 0)
    out = torch.empty_like(inputs[2])
    out[:, :, :-1] = resolve(unit.reference)(*inputs)[:, :, :-1]
    assert not compare(out, resolve(unit.reference)(*inputs, out_dtype=torch.float64), torch.bfloat16, BF16)["ok"]


def test_e2m1_table_and_nibble_order():
    codes = torch.arange(16, dtype=torch.uint8).reshape(16, 1)
    assert torch.equal(mx.unpack_nibbles(mx.pack_nibbles(codes)), codes)
    assert mx.pack_nibbles(torch.tensor([[3], [12]], dtype=torch.uint8)).item() == 0xC3  # low nibble = even row
    values = torch.tensor(mx.E2M1_VALUES, dtype=torch.float64)
    assert torch.equal(mx.round_to_e2m1(values), torch.arange(16, dtype=torch.uint8).where(values != 0, 0))
    ties = torch.tensor([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 7.0, -100.0])
    assert mx.round_to_e2m1(ties).tolist() == [0, 2, 2, 4, 4, 6, 6, 7, 15]


def _representable_mxfp4(k: int, n: int, seed: int) -> torch.Tensor:
    """Values exactly on the MXFP4 grid: e2m1 values times 2^e per 32-block, each block holding a
    magnitude-6 value so the encoder picks the same exponent."""
    g = torch.Generator().manual_seed(seed)
    codes = torch.randint(0, 16, (k, n), generator=g)
    codes[::32] = 7 + 8 * torch.randint(0, 2, (k // 32, n), generator=g)
    exps = torch.randint(-20, 20, (k // 32, n), generator=g).double()
    return torch.tensor(mx.E2M1_VALUES, dtype=torch.float64)[codes] * torch.exp2(exps).repeat_interleave(32, 0)


@pytest.mark.parametrize("seed", SEEDS)
def test_mxfp4_round_trip(seed):
    exact = _representable_mxfp4(96, 33, seed)
    assert torch.equal(mx.dequantize_mxfp4(*mx.quantize_mxfp4(exact)), exact)
    x = torch.randn(320, 45, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    packed, scales = mx.quantize_mxfp4(x)
    assert packed.shape == (160, 45) and scales.shape == (10, 45) and packed.dtype == scales.dtype == torch.uint8
    decoded = mx.dequantize_mxfp4(packed, scales)
    amax = x.abs().reshape(10, 32, 45).amax(1).repeat_interleave(32, 0)
    # Step of e2m1 in its top binade is 2 (4 -> 6) at scale 2^e with amax < 8 * 2^e: the error
    # per element is at most half a step, 2^e <= amax / 4.
    assert ((decoded - x).abs() <= amax / 4 + 1e-12).all()
    assert (decoded - x).norm() / x.norm() < 0.2


@pytest.mark.parametrize("seed", SEEDS)
def test_nvfp4_round_trip(seed):
    g = torch.Generator().manual_seed(seed)
    codes = torch.randint(0, 16, (80, 21), generator=g)
    codes[::16] = 7  # every 16-block reaches 6, so the encoder recovers its scale
    block = torch.exp2(torch.randint(-6, 3, (5, 21), generator=g).double())
    exact = torch.tensor(nv.E2M1_VALUES, dtype=torch.float64)[codes] * block.repeat_interleave(16, 0)
    packed, scales, tensor_scale = nv.quantize_nvfp4(exact)
    assert scales.dtype == torch.float8_e4m3fn and tensor_scale.dtype == torch.float32
    assert torch.equal(nv.unpack_nibbles(packed), codes.where(codes != 8, 0).to(torch.uint8))  # -0 encodes as 0
    # The decoded values carry the fp32 tensor scale's rounding: within 2^-23 relative.
    assert torch.allclose(nv.dequantize_nvfp4(packed, scales, tensor_scale), exact, rtol=2 ** -22, atol=0)
    x = torch.randn(320, 45, generator=g, dtype=torch.float64)
    decoded = nv.dequantize_nvfp4(*nv.quantize_nvfp4(x))
    amax = x.abs().reshape(20, 16, 45).amax(1).repeat_interleave(16, 0)
    # Half an e2m1 step at the block scale (amax/6 up to e4m3's 2^-4 relative rounding): <= amax/6 * 1.07.
    assert ((decoded - x).abs() <= amax / 6 * 1.07 + 1e-12).all()
    assert (decoded - x).norm() / x.norm() < 0.15
