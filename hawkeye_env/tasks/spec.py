"""Task metadata: what a kernel must compute, at which shapes, to what tolerance.

A task is a KernelBench-compatible module (``class Model(nn.Module)``, ``get_inputs(**shape)``,
``get_init_inputs(**shape)``) plus one ``TaskSpec`` named ``SPEC`` in the same module. Both
functions take the shape as keyword arguments with defaults, so KernelBench callers that pass
nothing still work and get the first GPU shape.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

Shape = Mapping[str, int]

# Torch ops any candidate may call: allocation, views and metadata. Names are aten overload
# packets as ``TorchDispatchMode`` reports them (``func.overloadpacket.__name__``). No host read of
# tensor data (``_local_scalar_dense``, what ``float(t)`` and ``.item()`` dispatch): a loop of scalar
# reads and ``fill_`` computes any result on the host, and the GPU replay refuses such reads anyway.
ALLOCATION_AND_VIEW_OPS: frozenset[str] = frozenset(
    {
        "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided",
        "zeros", "zeros_like", "new_zeros", "zero_", "fill_",
        "view", "_unsafe_view", "reshape", "as_strided", "t", "transpose", "permute",
        "expand", "unsqueeze", "squeeze", "slice", "select", "narrow", "split",
        "split_with_sizes", "chunk", "unbind", "detach", "alias", "lift_fresh",
        "contiguous", "view_as", "flatten", "unflatten", "movedim", "numel", "size",
        "stride", "sym_size", "sym_stride", "sym_numel", "is_contiguous", "dim",
    }
)
# Layout copies: a ``.contiguous()`` that really copies and ``.clone()`` dispatch ``clone``, an
# in-place copy between tensors ``copy_``. They move data and compute nothing, so they are allowed
# on every task whose answer is not itself a copy (``TaskSpec.answer_is_copy``). ``_to_copy`` is not
# here: it also converts dtypes, which rounds.
LAYOUT_COPY_OPS: frozenset[str] = frozenset({"clone", "copy_"})


@dataclass(frozen=True)
class Tolerance:
    """Pass rule for one output dtype, applied in float64 against the float64 reference ``ref``
    and calibrated by the error the task's own reference makes in its native precision (``nat``:
    the task's ``Model`` run in its own dtype on the same inputs, by the trusted parent).

    Each element's error is measured in units of its bound ``b_i = atol * rms(ref) + rtol * |ref_i|``
    (scaling by the RMS keeps the rule meaningful for heavy-tailed outputs that span decades):
    ``rho_i = |out_i - ref_i| / b_i``, and ``rho*_i`` the same for ``nat``. An output passes when

    1. ``rel_l2(out) <= max(rel_l2, l2_multiple * rel_l2(nat))``;
    2. ``quantile_q(rho) <= max(1, quantile_multiple * quantile_q(rho*))``: the element bound
       holds for all but ``1 - quantile`` of the elements;
    3. ``max(rho') <= worst_floor + worst_multiple * max(rho'*)``, and no element is off by more
       than ``WORST_CAP * (s_i + |ref_i|)``: a generous cap, so that zeroed or skipped elements
       still fail. ``s_i`` is the larger of ``rms(ref)`` and the RMS of the element's row (last
       dimension) of ``ref``, and ``rho'`` is ``rho`` measured with ``s_i`` for ``rms``: the worst
       element is judged on the scale of its own row (``correctness.row_rms``).

    Without a native output (``nat`` is None) the native terms are 0 and the fixed floors
    (``rel_l2``, the element bound, ``worst_floor``) decide alone. ``correctness.py`` states the
    measured error rates.
    """

    rtol: float
    atol: float
    rel_l2: float
    source: str
    quantile: float = 0.999
    l2_multiple: float = 4.0
    quantile_multiple: float = 4.0
    worst_multiple: float = 4.0
    worst_floor: float = 10.0

    def describe(self) -> str:
        """The rule in one line, for prompts and ``hawkeye tasks show``."""
        return (f"element bound rtol {self.rtol:g} x |ref| + atol {self.atol:g} x rms(ref), held by the "
                f"{self.quantile:g} quantile (x{self.quantile_multiple:g} the native reference's); "
                f"rel L2 <= max({self.rel_l2:g}, {self.l2_multiple:g} x native); worst element <= "
                f"{self.worst_floor:g} + {self.worst_multiple:g} x native bounds")


# A candidate's worst element may be off by at most this fraction of ``s_i + |ref_i|`` (``s_i``
# the larger of rms(ref) and its row's RMS) through ``worst_floor``: a zeroed element whose
# |ref_i| exceeds 1/3 of that scale fails, so a skipped row of 16 or more normal elements fails
# with probability above 1 - 1e-9.
WORST_CAP = 0.25

# The floors (rtol, atol, rel_l2) are the bounds that hold when the native reference is exact, in
# units of the output dtype's unit roundoff u (fp32 2^-24, bf16 2^-8, fp16 2^-11). The multiples
# (4) and the quantile (0.999) are measured on CPU with synthetic honest kernels and hacks
# (tests/judge/test_tolerance_rule.py, CPU, synthetic, 2026-12-01): see correctness.py.
#
# fp32: plain fp32 arithmetic lands far under 1e-5 relative (fp32 GEMM K=512: 2.9e-7; softmax:
# 7e-8); tf32 (10-bit mantissa operands) lands at 3e-4-8e-4 and bf16 compute at 2.9e-3, so
# rel_l2 = 1e-5 rejects both (threat model #10). Element bound: 2^-13 relative covers reassociated
# fp32 reductions over 1e5 terms; worst element 10x that.
FP32 = Tolerance(
    rtol=1.2e-4, atol=1.2e-4, rel_l2=1e-5,
    source="fp32 eps 1.2e-7 x reassociation over <=1e5 terms; tf32 (3e-4) must fail",
)
# bf16 outputs: rounding the exact answer to bf16 alone costs rel L2 1.65e-3 (0.42 u) and up to
# 2^-8 relative per element; a bf16 GEMM with fp32 accumulation measured 1.66e-3 relative L2 on
# the H200 (cuBLAS and the expert at 4096^3, the ``err`` of the gemm_bf16 rows of
# ``bench/results/sweep-gemm/gemm-sweep-h200-2026-11-30.jsonl``). rel_l2 = 8e-3 leaves 4.8x headroom for
# that and rejects fp8 operands (3.8e-2). Element bound 4 u; worst element 10x that (0.16 of
# rms + |ref|, under WORST_CAP).
BF16 = Tolerance(
    rtol=1.6e-2, atol=1.6e-2, rel_l2=8e-3,
    source="bf16 output rounding 2^-9; H200 bf16 GEMM rel L2 1.66e-3 (anchors 2026-11-29)",
)
# fp16 outputs: 3 more mantissa bits than bf16.
FP16 = Tolerance(
    rtol=2e-3, atol=2e-3, rel_l2=1e-3,
    source="fp16 output rounding 2^-11 with fp32 accumulation",
)
# float64 outputs (float64 tasks): the native reference is the float64 reference itself, so the
# floors decide: reassociation over 1e5 terms stays under 1e-11 relative.
FP64 = Tolerance(
    rtol=1e-10, atol=1e-10, rel_l2=1e-11,
    source="fp64 eps 2.2e-16 x reassociation over <=1e5 terms, with 100x headroom",
)
DEFAULT_TOLERANCES: dict[str, Tolerance] = {"float32": FP32, "bfloat16": BF16, "float16": FP16, "float64": FP64}
# bf16 attention: every bf16 implementation rounds the softmax weights to bf16 before P @ V, and in
# rows with few visible keys whose weighted values cancel that rounding is amplified. On the H200
# (causal B4 H32 S4096 D128, normal inputs; ``bench/results/tolerances/correctness-diag-h200-2026-11-30.jsonl``,
# BENCHMARKS.md, Tolerances calibrated on the vendor kernels) cuDNN, flash and eager SDPA all reached
# 1.78x the default element bound at the same element (rel L2 2.1e-3). The element bound is 2.5x
# the default (ratio 0.71 for the vendor kernels) and bounds the 99.9th percentile; the worst
# element may reach 6x it (0.24 of rms + |ref|, WORST_CAP); rel_l2 stays the bf16 default, 3.9x
# above them, so an fp8 or low-precision-softmax shortcut (~3e-2) still fails.
ATTENTION_BF16 = Tolerance(
    rtol=4e-2, atol=4e-2, rel_l2=8e-3, worst_floor=6.0,
    source="H200 2026-11-30: cuDNN/flash/eager bf16 SDPA reach 1.78x the bf16 element bound (causal S4096)",
)
# bf16 chunked linear attention: with heavy-tailed (Student-t3) inputs the carried state spans
# decades, and the bf16 operands of its matmuls cost more than the default element bound: on the
# H200 (simple GLA B8 H16 T2048 D128, ``bench/results/tolerances/correctness-diag-h200-2026-11-30.jsonl``) FLA's
# chunk kernel and ours both reached 5.2x it at the same element, at rel L2 2.5e-3. Element bound 0.1
# (ratio 0.83 for FLA) for the 99.9th percentile; the worst element may reach 2.5x it (0.25 of
# rms + |ref|, WORST_CAP: 3x FLA's worst); rel_l2 stays the bf16 default, 3.2x above FLA.
LINEAR_ATTENTION_BF16 = Tolerance(
    rtol=0.1, atol=0.1, rel_l2=8e-3, worst_floor=2.5,
    source="H200 2026-11-30: FLA chunk_simple_gla reaches 5.2x the bf16 element bound on heavy-tailed inputs",
)
# bf16 outputs of a chunked delta rule with bf16 MMA operands (FLA's design: W, U, the state copy
# and the new values N rounded to bf16). N = U - W S cancels, so the rounding of U and W S is
# amplified: units.chunked_scan.delta_rule measured rel L2 4.0e-3..5.8e-3 and single elements off
# by up to 2.9% of the output RMS at T=67/130, D=16/32 (CPU interpreter, 2 distributions, both
# variants). rel_l2 = 1.2e-2 keeps 2x headroom and still rejects fp8 operands or outputs (~3.6e-2
# rel L2); element bound and worst element as LINEAR_ATTENTION_BF16.
DELTA_RULE_BF16 = Tolerance(
    rtol=0.1, atol=0.1, rel_l2=1.2e-2, worst_floor=2.5,
    source="chunked delta rule with bf16 MMA operands: rel L2 <= 5.8e-3, element <= 2.9% of RMS "
           "(units.chunked_scan.delta_rule, CPU shapes); element bound as LINEAR_ATTENTION_BF16 (FLA "
           "reaches 5.2x the bf16 default on heavy-tailed inputs, H200 2026-11-30); fp8 (~3.6e-2) must fail",
)

# Tensor-core operand types (``TaskSpec.mma_operands``, SASS names): an FP8 task's matrix instructions
# take fp8 operands; an FP4 task's, on Hopper (no FP4 tensor cores), its decoded values as fp8 (e2m1
# values are exact in e4m3) or 16-bit floats, never tf32 or fp32 (the FP4 experts decode to bf16 for
# wgmma: ``units/mxfp4_gemm``, ``units/nvfp4_gemm``).
FP8_OPERANDS = ("E4M3", "E5M2")
FP4_OPERANDS_SM90 = ("E4M3", "E5M2", "BF16", "F16")

# Input distributions every verdict draws from. ``heavy_tailed`` is a Student-t with 3 degrees
# of freedom (docs/threat-model.md #12): finite variance, but outliers 10x the RMS are common.
DISTRIBUTIONS = ("normal", "uniform", "heavy_tailed")
# Value distributions beyond those (``inputs.draw_like``), each one extra trial per verdict:
# ``zeros`` (exact zeros, whole zero rows, rows that start with a zero), ``repeated`` (nine
# distinct values, so maxima tie), ``large`` (normal times the task's ``large_magnitude``, e.g.
# softmax logits of 1e4 in fp32, where exp without max subtraction overflows) and ``skewed_ids``
# (integer inputs redrawn heavy on their low end: repeated token ids, a skewed target frequency).
VALUE_DISTRIBUTIONS = ("zeros", "repeated", "large", "skewed_ids")
# Storage layouts an input may come in (``judge/layouts.py``), the same logical values in each:
# ``transposed`` (last two dims swapped in storage), ``sliced`` (rows padded: a column slice of a
# wider buffer), ``expanded`` (stride 0 along the first dim of size > 1: broadcast rows) and
# ``offset`` (a nonzero storage offset).
LAYOUTS = ("transposed", "sliced", "expanded", "offset")
# What a task's description says of its layouts (``TaskSpec.__post_init__`` appends it).
LAYOUT_NOTE = "Inputs may be non-contiguous views: respect their strides and storage offset"
LAYOUT_WORDS = {"transposed": "transposed", "sliced": "column slices of wider rows",
                "expanded": "broadcast with stride 0", "offset": "at a storage offset"}


@dataclass(frozen=True)
class Dim:
    """The values one shape key may take in hidden trials: multiples of ``multiple`` in
    ``[lo, hi]``, or exactly ``choices`` when given (e.g. a head dim in {64, 128})."""

    lo: int
    hi: int
    multiple: int = 1
    choices: tuple[int, ...] = ()

    def __post_init__(self):
        if not self.choices and (self.lo > self.hi or self.hi < self.multiple):
            raise ValueError(f"empty range {self}")


@dataclass(frozen=True)
class ShapeFamily:
    """The shapes a task is defined for, from which every verdict draws hidden trial shapes
    (``judge/hidden_shapes.py``). ``cpu`` / ``gpu``: per varied key its ``Dim``; keys not named
    keep the value of the public shape the draw starts from. ``valid``: a predicate over a whole
    shape (e.g. ``Hq % Hkv == 0``). A drawn shape also stays within the device's budget: FLOPs and
    bytes (``TaskSpec.flops`` / ``bytes_moved``) at most the largest public CPU shape's on CPU,
    the first GPU shape's on CUDA."""

    cpu: Mapping[str, Dim] = field(default_factory=dict)
    gpu: Mapping[str, Dim] = field(default_factory=dict)
    valid: Callable[[dict], bool] | None = None

    def dims(self, device: str) -> Mapping[str, Dim]:
        return self.cpu if device == "cpu" else self.gpu


# Public values that are all powers of two from this size up (head dims 16..128) are taken as a
# requirement of the task's kernels (``tl.arange`` extents), not a coincidence of the shapes.
POW2_FROM = 16


def derived_family(cpu_shapes, gpu_shapes, valid: Callable[[dict], bool] | None = None) -> ShapeFamily:
    """The default family from a task's public shapes: a key whose public values differ varies
    over multiples of their GCD (over powers of two where every public value is one of at least
    ``POW2_FROM``: head dims, tile-shaped keys), on CPU within the CPU shapes' range, on CUDA within
    every public value's range; a key with one public value stays fixed.
    ``valid`` as ``ShapeFamily.valid``."""
    cpu, gpu = {}, {}
    keys = {k for s in (*cpu_shapes, *gpu_shapes) for k in s}
    for k in sorted(keys):
        cv = [s[k] for s in cpu_shapes if k in s]
        gv = [s[k] for s in gpu_shapes if k in s]
        every = cv + gv
        if len(set(every)) < 2 or not all(isinstance(v, int) and v > 0 for v in every):
            continue
        m = math.gcd(*every)
        lo_gpu, hi_gpu = min(every), max(every)
        if min(every) >= POW2_FROM and all(v & (v - 1) == 0 for v in every):
            if len(set(cv)) > 1:
                cpu[k] = Dim(min(cv), max(cv), choices=_pow2(min(cv), max(cv)))
            gpu[k] = Dim(lo_gpu, hi_gpu, choices=_pow2(lo_gpu, hi_gpu))
            continue
        if len(set(cv)) > 1:
            cpu[k] = Dim(min(cv), max(cv), m)
        gpu[k] = Dim(lo_gpu, hi_gpu, m)
    return ShapeFamily(cpu, gpu, valid)


def _pow2(lo: int, hi: int) -> tuple[int, ...]:
    return tuple(2**e for e in range(hi.bit_length()) if lo <= 2**e <= hi)


class BaselineUnavailable(RuntimeError):
    """A vendor baseline cannot run here (library not installed, shape or device unsupported)."""


@dataclass(frozen=True)
class TaskSpec:
    """Everything the evaluator needs to know about a task besides its module.

    Attributes:
        id: unique task id, ``<op>_<dtype>`` (e.g. ``gemm_bf16``).
        family: grouping for reports (``elementwise``, ``reduction``, ``gemm``, ...).
        description: one paragraph an agent reads.
        module: dotted path of the KernelBench-style module holding ``Model``.
        dtypes: input/output dtype names, informational.
        cpu_shapes: shapes (``get_inputs`` kwargs) checked under the Triton interpreter; keep tiny.
        gpu_shapes: shapes checked on CUDA; the first one is timed.
        flops: FLOP count of one forward at a shape (roofline floor).
        bytes_moved: fewest DRAM bytes one forward must move at a shape (roofline floor).
        tags: unit names whose strategies matter for this task.
        distributions: input distributions to draw from (subset of ``DISTRIBUTIONS``).
        extra_allowed_ops: torch ops a candidate may call besides ``ALLOCATION_AND_VIEW_OPS`` and
            ``LAYOUT_COPY_OPS``.
        answer_is_copy: the answer is a copy of the inputs (a transpose, a gather): then
            ``LAYOUT_COPY_OPS`` are not allowed ops, since they would compute it.
        tolerances: per output dtype; defaults to ``DEFAULT_TOLERANCES``.
        solution: dotted module path of the task's expert Triton solution (defines ``ModelNew``).
        vendor_baselines: extra baselines the expert solution is compared against, name to
            ``"module:function"``. The function is called as ``fn(model, *inputs)`` with the task's
            reference ``Model`` (on the device, parameters loaded) and the forward's inputs, and
            returns what ``Model.forward`` returns (e.g. ``torch.matmul`` for cuBLAS, SDPA with one
            back-end forced, an FLA kernel). It raises ``BaselineUnavailable`` with the reason when
            its library is missing or cannot run this shape or device; the reason is reported.
        targets: the expert solution's speed targets, baseline name (``eager``, ``compile`` or a
            ``vendor_baselines`` name) to the least speedup over it; ``copy_bandwidth`` instead
            asks for that fraction of the measured device-to-device copy bandwidth, from
            ``bytes_moved``. Reported by the task benchmark, never asserted in tests.
        no_cpu_reason: why ``cpu_shapes`` is empty (too large for the interpreter, and what
            keeps it so); "" when the task has CPU shapes.
        shape_family: the shapes the task is defined for, from which each verdict draws hidden
            trial shapes (``ShapeFamily``); None derives it from the public shapes
            (``derived_family``); ``ShapeFamily()`` varies nothing.
        layouts: storage layouts (``LAYOUTS``) the inputs may come in besides contiguous; each
            verdict checks one, drawn from its seed. The description says so.
        value_distributions: extra value distributions (``VALUE_DISTRIBUTIONS``), one trial each.
        large_magnitude: the scale of the ``large`` distribution (0: none), within what the
            reference and the dtype tolerate.
        mma_operands: for a task whose precision is the point (FP8, FP4), the tensor-core operand
            types (SASS names: ``E4M3``, ``E5M2``, ``BF16``, ``F16``) of which at least one of the
            candidate's MMA instructions must take one: the verdict's instruction evidence
            (``judge/parent/decide/instructions.py``) and the precision its speed of light is
            measured at (``speed_of_light.precision_of``); empty for every other task.
    """

    id: str
    family: str
    description: str
    module: str
    dtypes: tuple[str, ...]
    cpu_shapes: tuple[Shape, ...]
    gpu_shapes: tuple[Shape, ...]
    flops: Callable[..., float]
    bytes_moved: Callable[..., float]
    tags: tuple[str, ...] = ()
    distributions: tuple[str, ...] = DISTRIBUTIONS
    extra_allowed_ops: frozenset[str] = frozenset()
    tolerances: Mapping[str, Tolerance] = field(default_factory=lambda: dict(DEFAULT_TOLERANCES))
    solution: str | None = None
    vendor_baselines: Mapping[str, str] = field(default_factory=dict)
    targets: Mapping[str, float] = field(default_factory=dict)
    no_cpu_reason: str = ""
    shape_family: ShapeFamily | None = None
    layouts: tuple[str, ...] = ()
    value_distributions: tuple[str, ...] = ("zeros", "repeated")
    large_magnitude: float = 0.0
    mma_operands: tuple[str, ...] = ()

    answer_is_copy: bool = False

    def __post_init__(self):
        bad = [x for x in self.layouts if x not in LAYOUTS]
        if bad:
            raise ValueError(f"task {self.id}: unknown layouts {bad}; known: {', '.join(LAYOUTS)}")
        if self.layouts and LAYOUT_NOTE not in self.description:
            names = ", ".join(LAYOUT_WORDS[x] for x in self.layouts)
            object.__setattr__(self, "description", f"{self.description} {LAYOUT_NOTE} ({names}).")

    @property
    def allowed_ops(self) -> frozenset[str]:
        copies = frozenset() if self.answer_is_copy else LAYOUT_COPY_OPS
        return ALLOCATION_AND_VIEW_OPS | copies | self.extra_allowed_ops

    def shapes(self, device: str) -> tuple[Shape, ...]:
        return self.cpu_shapes if device == "cpu" else self.gpu_shapes

    def hidden_family(self) -> ShapeFamily:
        """The declared ``shape_family``, or the one derived from the public shapes."""
        if self.shape_family is not None:
            return self.shape_family
        return derived_family(self.cpu_shapes, self.gpu_shapes)

    def extra_distributions(self) -> tuple[str, ...]:
        """The value distributions this task's verdicts add (``large`` only with a magnitude)."""
        return tuple(d for d in self.value_distributions if d != "large" or self.large_magnitude > 0)

    def tolerance(self, dtype: str) -> Tolerance:
        try:
            return self.tolerances[dtype]
        except KeyError:
            raise KeyError(f"task {self.id} has no tolerance for output dtype {dtype}") from None

    def summary(self) -> dict:
        """JSON-ready description (``hawkeye tasks show --json``)."""
        return {
            "id": self.id,
            "family": self.family,
            "description": self.description,
            "module": self.module,
            "dtypes": list(self.dtypes),
            "cpu_shapes": [dict(s) for s in self.cpu_shapes],
            "gpu_shapes": [dict(s) for s in self.gpu_shapes],
            "gpu_flops": self.flops(**self.gpu_shapes[0]),
            "gpu_bytes": self.bytes_moved(**self.gpu_shapes[0]),
            "tags": list(self.tags),
            "distributions": list(self.distributions),
            "allowed_ops": sorted(self.allowed_ops),
            "tolerances": {k: vars(v) for k, v in self.tolerances.items()},
            "solution": self.solution,
            "vendor_baselines": dict(self.vendor_baselines),
            "targets": dict(self.targets),
            "no_cpu_reason": self.no_cpu_reason,
            "hidden_shapes": {d: {k: vars(x) for k, x in self.hidden_family().dims(d).items()}
                              for d in ("cpu", "cuda")},
            "layouts": list(self.layouts),
            "value_distributions": list(self.extra_distributions()),
            "mma_operands": list(self.mma_operands),
        }
