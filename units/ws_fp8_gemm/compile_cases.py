"""The compile cases of ``ws_fp8_gemm`` for ``python -m units.gluon_compile``: every configuration
of ``kernel.CONFIGS`` on FP8 e4m3 operands with a K-major ``b`` and scales. Kept out of
``kernel.py``, which candidates import or inline, so they never reach the compiler helpers."""

from __future__ import annotations

from units.gluon_compile import CompileCase
from units.ws_fp8_gemm.kernel import CONFIGS
from units.ws_persistent_gemm.compile_cases import compile_case


def compile_cases() -> list[CompileCase]:
    """Every configuration of ``CONFIGS``, for ``python -m units.gluon_compile``."""
    return [compile_case(c, "fp8e4nv", b_k_major=True, scaled=True, prefix="fp8_") for c in CONFIGS.values()]

