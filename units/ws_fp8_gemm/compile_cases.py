"""The compile cases of ``ws_fp8_gemm`` for ``python -m units.lib.gluon_compile``: every configuration
of ``kernel.CONFIGS`` on FP8 e4m3 operands with a K-major ``b`` and per-tensor scales, and the
solution with per-row scales. Kept out of
``kernel.py``, which candidates import or inline, so they never reach the compiler helpers."""

from __future__ import annotations

from units.lib.gluon_compile import CompileCase
from units.ws_fp8_gemm.kernel import CONFIGS, SOLUTION
from units.ws_persistent_gemm.compile_cases import compile_case
from units.ws_persistent_gemm.kernel import ROW_SCALES, TENSOR_SCALES


def compile_cases() -> list[CompileCase]:
    """Every configuration of ``CONFIGS`` with per-tensor scales and the solution with per-row
    scales, for ``python -m units.lib.gluon_compile``."""
    return ([compile_case(c, "fp8e4nv", b_k_major=True, scaled=TENSOR_SCALES, prefix="fp8_") for c in CONFIGS.values()]
            + [compile_case(SOLUTION, "fp8e4nv", b_k_major=True, scaled=ROW_SCALES, prefix="fp8_rows_")])

