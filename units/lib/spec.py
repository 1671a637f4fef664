"""What a unit is: taxonomy coordinates, the callables, the profiling metric and its pass rule.

Every runnable unit is a package ``units/<name>/`` with the same files:

- ``README.md``: the usage guide an agent reads (strategy, when it pays, how to call and splice it,
  traps, figures measured on our GPU);
- ``kernel.py``: the documented solution callable (Triton, or Gluon where ``UNIT.language`` says
  so), named in ``UNIT.solution``;
- ``naive.py``: the same computation without the strategy, named in ``UNIT.naive``;
- ``reference.py``: a plain PyTorch reference, named in ``UNIT.reference``;
- ``meta.py``: ``UNIT = Unit(...)``, this module's dataclass, which also says how to build inputs.

The paper's pass rule: a kernel passes a unit when it reaches at least ``Metric.pass_fraction`` (99%)
of the solution's value of the metric, in the metric's direction; the solution itself must beat the
naive kernel by ``Metric.min_margin``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

Shape = Mapping[str, int]
GLUON_CPU_SKIP = ("Gluon kernels need a Hopper GPU; no interpreter (compiled for sm_90a by units.lib.gluon_compile "
                  "instead, run by `hawkeye units verify --device cuda`)")


@dataclass(frozen=True)
class Metric:
    """A profiling metric and its pass rule.

    Attributes:
        name: ``achieved_tbps`` (DRAM bytes over time), ``achieved_tflops``, or an Nsight Compute
            counter name such as ``dram__bytes_read.sum`` or ``lts__t_sector_hit_rate.pct``.
        unit: display unit (``TB/s``, ``TFLOP/s``, ``bytes``, ``%``).
        higher_is_better: direction of the pass rule.
        how: one sentence: what is measured, at which shape, with which tool.
        min_margin: the solution must beat the naive kernel by this factor (e.g. 1.5 = 50% better).
        pass_fraction: a candidate passes at ``>= pass_fraction * solution`` (higher is better) or
            ``<= solution / pass_fraction`` (lower is better).
    """

    name: str
    unit: str
    higher_is_better: bool
    how: str
    min_margin: float
    pass_fraction: float = 0.99

    def passes(self, candidate: float, solution: float) -> bool:
        if self.higher_is_better:
            return candidate >= self.pass_fraction * solution
        return candidate <= solution / self.pass_fraction

    def beats(self, solution: float, naive: float) -> bool:
        """Whether the solution beats the naive kernel by ``min_margin`` in the metric's direction."""
        if self.higher_is_better:
            return solution >= self.min_margin * naive
        return solution * self.min_margin <= naive


@dataclass(frozen=True)
class Unit:
    """One unit test of the taxonomy.

    Attributes:
        name: package name under ``units/`` (``snake_case``).
        title: one line.
        architecture: ``hopper`` (needs sm_90 features), ``ampere+`` (portable to sm_80 and later),
            ``blackwell`` or ``mi350`` (described on paper, not runnable here).
        strategy: the optimization strategy, as named in the taxonomy table.
        precisions: dtypes the unit covers (``bf16``, ``fp8e4m3``, ``mxfp4``...).
        tags: task tags this unit serves (matched against ``TaskSpec.tags``).
        summary: two or three sentences for tables and prompts.
        metric: the profiling metric and pass rule.
        solution / naive / reference: ``module:function`` paths of the three callables; each takes
            the tensors from ``make_inputs`` and returns the output tensor(s).
        make_inputs: ``module:function`` path; ``make_inputs(shape, device, seed) -> tuple`` of args.
        cpu_shapes: tiny odd shapes checked under the Triton interpreter.
        gpu_shapes: shapes the metric is measured at on CUDA (first one reported).
        flops / bytes_moved: counts at a shape, for TFLOP/s and TB/s metrics.
        runnable: False for on-paper slots (another architecture); ``why`` says why.
        why: for Hopper-only units, why they need Hopper; for on-paper slots, what hardware they need.
        language: ``triton`` or ``gluon``, the language of the solution kernel. Gluon has no
            interpreter: the CPU check skips a Gluon solution with ``GLUON_CPU_SKIP`` and
            ``units.lib.gluon_compile`` cross-compiles it for sm_90a instead (the cases named by
            ``extra["compile_cases"]``); its naive counterpart and reference still run on CPU.
    """

    name: str
    title: str
    architecture: str
    strategy: str
    precisions: tuple[str, ...]
    tags: tuple[str, ...]
    summary: str
    metric: Metric | None = None
    solution: str = ""
    naive: str = ""
    reference: str = ""
    make_inputs: str = ""
    cpu_shapes: tuple[Shape, ...] = ()
    gpu_shapes: tuple[Shape, ...] = ()
    flops: Callable[..., float] | None = None
    bytes_moved: Callable[..., float] | None = None
    runnable: bool = True
    why: str = ""
    extra: Mapping[str, str] = field(default_factory=dict)
    language: str = "triton"

    def cpu_skip(self, role: str) -> str:
        """Why ``role``'s callable cannot run on the CPU (empty when it can)."""
        return GLUON_CPU_SKIP if self.language == "gluon" and role == "solution" else ""
