"""Speed of light: the least time a task's work can take on a GPU, at the precision it must compute in.

``roofline.floor_ms`` is a safety floor: every FLOP at the fastest unit the GPU has (fp8), so that
no honest kernel ever trips it. The speed of light is the floor a kernel is measured against: the
task's FLOPs (``TaskSpec.flops``) at the datasheet peak of the precision its multiply-accumulates
must run in, and its fewest DRAM bytes (``TaskSpec.bytes_moved``) at the datasheet bandwidth,
whichever takes longer::

    sol_ms = max(flops / peak(precision, clock), bytes / bandwidth)

The precision is the fastest of the task's tensor-core operand types (``TaskSpec.mma_operands``:
an FP8 GEMM is measured against the fp8 peak, an FP4 GEMM on Hopper against the fastest type its
decoded values fit), else its first dtype: bf16 and fp16 against their tensor-core peak, fp32 (whose
tolerance rejects tf32 and bf16 operands) against the CUDA cores' fp32 peak. ``fraction`` is
``sol_ms`` over a measured time: 1.0 would be a kernel at the speed of light.

Clocks: datasheet peaks hold at one SM clock. On GH100 (132 SMs) the dense bf16 figure, 989.4
TFLOP/s, is 132 SMs x 4096 FLOP per SM per clock x 1.830 GHz (fp8: 8192 FLOP per clock, 1979
TFLOP/s), and the fp32 figure, 67 TFLOP/s, is 132 x 256 x 1.98 GHz. Where the clock a timing ran at
is known (the replay reads the SM clock after its timed rounds), the compute peaks scale with it;
DRAM bandwidth does not (HBM has its own clock). Where it is not, the datasheet clock is assumed.

Example::

    >>> from hawkeye_env.tasks.registry import get_task
    >>> light = speed_of_light(get_task("gemm_bf16"), {"M": 4096, "N": 4096, "K": 4096}, "NVIDIA H200")
    >>> round(light.ms, 4), light.bound, light.precision
    (0.1389, 'compute', 'bfloat16')
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hawkeye_env.judge.parent.decide.roofline import CEILINGS, ceiling_for
from hawkeye_env.tasks.spec import TaskSpec

# The GPUs the suite is judged on (``hawkeye tasks show`` prints each one's speed of light); their
# ``roofline.CEILINGS`` rows are the SXM parts' datasheet figures.
JUDGED_GPUS = ("H100", "H200")
# Tensor-core operand types as the SASS names them (``HGMMA.64x128x32.F32.E4M3.E4M3``), to the
# ``roofline.Ceiling.tflops`` key of their peak.
OPERAND_PRECISION = {"E4M3": "float8", "E5M2": "float8", "BF16": "bfloat16", "F16": "float16"}
# The SM clock (MHz) each datasheet figure holds at, per unit (module docstring); GPUs not listed
# are taken at their datasheet figures whatever the clock.
DATASHEET_CLOCK_MHZ = {"H100": {"tensor": 1830.0, "cuda_core": 1980.0},
                       "H200": {"tensor": 1830.0, "cuda_core": 1980.0}}
# A clock reading outside this range (MHz) is not a clock: the datasheet clock is used instead.
PLAUSIBLE_CLOCK_MHZ = (100.0, 4000.0)


@dataclass(frozen=True)
class Light:
    """The speed of light of one task shape on one GPU.

    ``ms`` the floor; ``compute_ms`` and ``memory_ms`` its two terms; ``bound`` which one decides
    (``"compute"`` or ``"memory"``); ``precision`` the peak's key (``"bfloat16"``, ``"float8"``,
    ``"float32"``...); ``tflops`` and ``tbps`` the peaks used; ``clock_mhz`` the SM clock they were
    scaled to (None: the datasheet's); ``gpu`` the ``roofline.CEILINGS`` key (``""``: unknown GPU).
    """

    ms: float
    compute_ms: float
    memory_ms: float
    bound: str
    precision: str
    tflops: float
    tbps: float
    clock_mhz: float | None
    gpu: str

    def describe(self) -> str:
        """One line: the floor, what bounds it and the peak it assumes."""
        clock = f" at {self.clock_mhz:.0f} MHz" if self.clock_mhz else ""
        if self.bound == "memory":
            return f"{self.ms:.4f} ms, memory-bound ({self.tbps:g} TB/s)"
        return f"{self.ms:.4f} ms, compute-bound ({self.tflops:.0f} TFLOP/s {self.precision}{clock})"


def precision_of(spec: TaskSpec) -> str:
    """The ``Ceiling.tflops`` key a task's FLOPs are measured at (module docstring)."""
    if spec.mma_operands:
        order = ("float8", "bfloat16", "float16")
        return min((OPERAND_PRECISION[t] for t in spec.mma_operands), key=order.index)
    first = spec.dtypes[0] if spec.dtypes else "float32"
    return first if first in ("bfloat16", "float16") else "float8" if first.startswith("float8") else "float32"


def usable_clock(sm_clock_mhz) -> float | None:
    """``sm_clock_mhz`` as a float when it is a plausible SM clock, else None."""
    try:
        clock = float(sm_clock_mhz)
    except (TypeError, ValueError):
        return None
    lo, hi = PLAUSIBLE_CLOCK_MHZ
    return clock if math.isfinite(clock) and lo <= clock <= hi else None


def gpu_key(device_name: str) -> str:
    """The ``roofline.CEILINGS`` key in ``device_name`` (``"NVIDIA H200"`` -> ``"H200"``), or ``""``."""
    return next((key for key in CEILINGS if key in device_name), "")


def speed_of_light(spec: TaskSpec, shape: dict, device_name: str, sm_clock_mhz: float | None = None) -> Light:
    """The speed of light of ``spec`` at ``shape`` on the GPU ``device_name`` names, its compute
    peak scaled to ``sm_clock_mhz`` when that is a plausible clock and the GPU's datasheet clocks
    are known (module docstring)."""
    ceiling, key = ceiling_for(device_name), gpu_key(device_name)
    precision = precision_of(spec)
    tflops = ceiling.tflops.get(precision, max(ceiling.tflops.values()))
    clock = usable_clock(sm_clock_mhz)
    clocks = DATASHEET_CLOCK_MHZ.get(key)
    if clock is not None and clocks is not None:
        tflops *= clock / clocks["cuda_core" if precision == "float32" else "tensor"]
    else:
        clock = None
    compute_ms = spec.flops(**shape) / (tflops * 1e12) * 1e3
    memory_ms = spec.bytes_moved(**shape) / (ceiling.tbps * 1e12) * 1e3
    bound = "compute" if compute_ms >= memory_ms else "memory"
    return Light(max(compute_ms, memory_ms), compute_ms, memory_ms, bound, precision, tflops, ceiling.tbps,
                 clock, key)


def fraction(light_ms: float, measured_ms: float) -> float | None:
    """``light_ms / measured_ms``: the share of the speed of light a measured time reaches (None for
    a time that is not finite and positive)."""
    if not (isinstance(measured_ms, (int, float)) and math.isfinite(measured_ms) and measured_ms > 0):
        return None
    return light_ms / measured_ms


__all__ = ["DATASHEET_CLOCK_MHZ", "JUDGED_GPUS", "Light", "OPERAND_PRECISION", "fraction", "gpu_key",
           "precision_of", "speed_of_light", "usable_clock"]
