"""The compile cases of ``ws_persistent_gemm`` for ``python -m units.lib.gluon_compile``: every
configuration of ``kernel.CONFIGS`` (the solution first) and the solution reading a K-major ``b``,
as ``CompileCase`` (signature, constexprs, warps, register cap). Kept out of ``kernel.py``, which
candidates import or inline, so they never reach the compiler helpers."""

from __future__ import annotations

from triton.experimental.gluon import language as gl

from units.lib.gluon_compile import CompileCase, tensordesc
from units.ws_persistent_gemm.kernel import (
    CONFIGS,
    CONSUMER_REGS,
    MAXNREG,
    NO_SCALES,
    PRODUCER_REGS,
    SOLUTION,
    WsGemmConfig,
    descriptor_shapes,
    shared_layout,
    ws_gemm_kernel,
)


def compile_case(config: WsGemmConfig, in_dtype: str = "bf16", b_k_major: bool = False, scaled: int = NO_SCALES,
                 prefix: str = "") -> CompileCase:
    """The ``CompileCase`` of ``ws_gemm_kernel`` in ``config`` (``units.lib.gluon_compile``); ``scaled``
    is the epilogue's scale mode (``kernel.NO_SCALES``, ``TENSOR_SCALES`` or ``ROW_SCALES``)."""
    gl_in = {"bf16": gl.bfloat16, "fp8e4nv": gl.float8e4nv}[in_dtype]
    a_block, b_block, c_block = descriptor_shapes(config, b_k_major)
    constexprs = dict(SCHEDULE=config.schedule, ROWS=config.consumer_m, BLOCK_M=config.block_m, BLOCK_N=config.block_n,
                      BLOCK_K=config.block_k, GROUP_M=config.group_m, NUM_STAGES=config.num_stages,
                      B_K_MAJOR=b_k_major, SCALED=scaled, EPI_N=c_block[1], PROMOTE_EVERY=config.promote_every,
                      PRODUCER_REGS=PRODUCER_REGS,
                      CONSUMER_REGS=CONSUMER_REGS)
    signature = {"a_desc": tensordesc(in_dtype, a_block, shared_layout(a_block, gl_in)),
                 "b_desc": tensordesc(in_dtype, b_block, shared_layout(b_block, gl_in)),
                 "c_desc": tensordesc("bf16", c_block, shared_layout(c_block, gl.bfloat16)),
                 "scale_a_ptr": "*fp32", "scale_b_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32"}
    signature |= {name: "constexpr" for name in constexprs}
    return CompileCase(prefix + config.name, ws_gemm_kernel, signature, constexprs, num_warps=4, maxnreg=MAXNREG)


def compile_cases() -> list[CompileCase]:
    """Every configuration of ``CONFIGS`` (the solution first), and the solution reading a K-major
    ``b``, for ``python -m units.lib.gluon_compile``."""
    return [compile_case(c) for c in CONFIGS.values()] + [compile_case(SOLUTION, b_k_major=True, prefix="kmajor_b_")]

