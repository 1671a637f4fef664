"""The compile cases of ``ws_attention_fwd`` for ``python -m units.lib.gluon_compile``: causal and
full attention at D = 128 for every configuration, and the solution at D = 64. Kept out of
``kernel.py``, which candidates import or inline, so they never reach the compiler helpers."""

from __future__ import annotations

from units.lib.gluon_compile import CompileCase, tensordesc
from units.ws_attention_fwd.kernel import (
    BLOCK_M,
    CONFIGS,
    CONSUMER_REGS,
    CONSUMER_ROWS,
    MAXNREG,
    PRODUCER_REGS,
    SOLUTION,
    AttnConfig,
    shared_layout,
    ws_attention_kernel,
)


def compile_case(config: AttnConfig, head_d: int, causal: bool) -> CompileCase:
    """The ``CompileCase`` of ``ws_attention_kernel`` (``units.lib.gluon_compile``)."""
    q_block, kv_block, o_block = [BLOCK_M, head_d], [config.block_n, head_d], [CONSUMER_ROWS, head_d]
    constexprs = dict(HEAD_D=head_d, BLOCK_N=config.block_n, KV_STAGES=config.kv_stages, CAUSAL=causal,
                      DEFER_PV=config.defer_pv, OVERLAP=config.overlap,
                      PINGPONG=config.pingpong, FUSED_SCALE=config.fused_scale,
                      PRODUCER_REGS=PRODUCER_REGS, CONSUMER_REGS=CONSUMER_REGS)
    signature = {"q_desc": tensordesc("bf16", q_block, shared_layout(q_block)),
                 "k_desc": tensordesc("bf16", kv_block, shared_layout(kv_block)),
                 "v_desc": tensordesc("bf16", kv_block, shared_layout(kv_block)),
                 "o_desc": tensordesc("bf16", o_block, shared_layout(o_block)),
                 "H": "i32", "GROUP": "i32", "S": "i32", "qk_scale": "fp32"}
    signature |= {name: "constexpr" for name in constexprs}
    name = f"{'causal' if causal else 'full'}_d{head_d}_{config.name}"
    return CompileCase(name, ws_attention_kernel, signature, constexprs, num_warps=4, maxnreg=MAXNREG)


def compile_cases() -> list[CompileCase]:
    """Causal and full attention at D = 128 for every config, and the solution at D = 64."""
    cases = [compile_case(c, 128, causal) for c in CONFIGS.values() for causal in (True, False)]
    return cases + [compile_case(SOLUTION, 64, True)]

