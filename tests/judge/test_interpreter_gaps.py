"""Honest GPU idioms run under Triton's CPU interpreter once ``install_interpreter_fixes`` is in
(``hawkeye_env/judge/sandboxed/common/interpreter/gaps.py``): each kernel of ``interpreter_gap_kernels`` fails
without the fixes (a fresh interpreter shows it) and matches torch with them; what the CPU cannot
run raises ``NotCheckableOnCPU``; the fixes are inert without ``TRITON_INTERPRET``; and
candidates written with these idioms are judged correct end to end on CPU.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

if os.environ.get("TRITON_INTERPRET") != "1":
    pytest.skip("the interpreter's gaps only matter under TRITON_INTERPRET=1", allow_module_level=True)

import triton
import triton.language as tl

from hawkeye_env.judge.sandboxed.common.interpreter.fixes import install_interpreter_fixes
from hawkeye_env.judge.sandboxed.common.interpreter.not_checkable import NotCheckableOnCPU

install_interpreter_fixes()
install_interpreter_fixes()  # idempotent

from tests.judge import interpreter_gap_kernels as kernels  # noqa: E402  (after the fixes, as a candidate)

REPO = Path(__file__).resolve().parents[2]
CANDIDATES = REPO / "tests" / "candidates" / "interpreter_gaps"
# Idioms the interpreter already ran before the fixes; kept as cases so they stay working.
ALREADY_RAN = {"jit_by_call"}


@pytest.mark.parametrize("case", sorted(kernels.CASES))
def test_the_honest_kernel_matches_torch(case):
    kernels.CASES[case]()


def test_without_the_fixes_each_gap_fails():
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    out = subprocess.run([sys.executable, "-m", "tests.judge.interpreter_gap_kernels"], cwd=REPO, env=env,
                         capture_output=True, text=True, timeout=600, check=True)
    errors = json.loads(out.stdout.strip().splitlines()[-1])
    assert set(errors) == set(kernels.CASES)
    failed = {case for case, error in errors.items() if error}
    assert failed == set(kernels.CASES) - ALREADY_RAN, errors
    assert "0 active drivers" in errors["autotune"]
    assert "has no attribute 'to'" in errors["float_scalar"]


@triton.jit
def _inline_asm(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(out_ptr + offs, y)


@triton.jit
def _bessel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.extra.cuda.libdevice.j0(tl.load(x_ptr + offs)))


@pytest.mark.parametrize("kernel", [_inline_asm, _bessel], ids=["inline_asm", "libdevice_j0"])
def test_what_the_cpu_cannot_run_raises_not_checkable(kernel):
    x = torch.ones(16)
    with pytest.raises(NotCheckableOnCPU):
        kernel[(1,)](x, torch.empty_like(x), BLOCK=16)


def test_a_builtin_called_on_the_host_still_asks_for_jit():
    with pytest.raises(ValueError, match="triton.jit"):
        tl.exp(tl.tensor(None, tl.float32))


def test_libdevice_special_functions_match_torch():
    from triton.runtime.interpreter import TensorHandle

    from hawkeye_env.judge.sandboxed.common.interpreter.libdevice import create_extern_elementwise

    x = torch.linspace(-0.95, 0.95, 41)
    handle = TensorHandle(x.numpy(), tl.float32)
    for symbol, want in (("__nv_erfinvf", torch.erfinv(x)), ("__nv_lgammaf", torch.lgamma(x)),
                         ("__nv_expm1f", torch.expm1(x)), ("__nv_float2int_rd", torch.floor(x).int()),
                         ("__nv_normcdff", torch.special.ndtr(x)), ("__nv_roundf", torch.sign(x) * torch.floor(
                             x.abs() + 0.5)), ("__nv_fast_expf", torch.exp(x))):
        ret = tl.int32 if want.dtype == torch.int32 else tl.float32
        got = torch.from_numpy(create_extern_elementwise(None, "", "", symbol, [handle], ret, True).data)
        torch.testing.assert_close(got, want, rtol=2e-6, atol=2e-6, msg=symbol)


def test_the_fixes_are_inert_without_the_interpreter():
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    code = ("import sys\nfrom hawkeye_env.judge.sandboxed.common.interpreter.fixes import install_interpreter_fixes\n"
            "install_interpreter_fixes()\nprint(sorted(m for m in sys.modules if m.startswith('triton')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True,
                         timeout=120, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("task, name", [("swiglu_bf16", "swiglu_autotune_libdevice"),
                                        ("vector_add_fp32", "vector_add_heuristics_autotune")])
def test_a_candidate_with_these_idioms_is_judged_correct_on_cpu(task, name):
    from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator
    from hawkeye_env.judge.parent.store import ResultStore

    verdict = Evaluator(ResultStore(":memory:"), EvalConfig(seed=0)).evaluate(
        task, (CANDIDATES / f"{name}.py").read_text(encoding="utf-8"), "cpu")
    assert verdict.correct, verdict.feedback


NOT_CHECKABLE_ADD = '''
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    s = tl.load(a_ptr + offs, mask=mask) + tl.load(b_ptr + offs, mask=mask)
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [s], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(out_ptr + offs, y, mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        out = torch.empty_like(a)
        add_kernel[(triton.cdiv(a.numel(), 256),)](a, b, out, a.numel(), BLOCK=256)
        return out
'''


def test_a_kernel_the_cpu_cannot_run_gets_a_not_checkable_verdict_without_penalty(tmp_path):
    """Inline PTX runs only on a GPU: the CPU verdict says so (``Failure.NOT_CHECKABLE_ON_CPU``,
    the feedback's own line), pays 0.0 rather than a runtime error's -0.5, and stays below an
    honest correct kernel's 0.2."""
    from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator
    from hawkeye_env.judge.parent.store import ResultStore
    from hawkeye_env.judge.shared.verdict import Failure, Stage

    ev = Evaluator(ResultStore(tmp_path / "s.sqlite3"), EvalConfig(seed=0))
    v = ev.evaluate("vector_add_fp32", NOT_CHECKABLE_ADD, device="cpu")
    assert (v.stage, v.failure, v.reward) == (Stage.RUNTIME_ERROR, Failure.NOT_CHECKABLE_ON_CPU, 0.0), v.feedback
    assert "Not checkable on CPU" in v.feedback.splitlines()[1]
