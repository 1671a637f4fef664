"""The sm_90 cross-compile of a CPU plan's kernels (``sandboxed/replay/cross_compile.py``), for real:
Triton compiles checked kernel source for the H100/H200 in a child process with its interpreter
off, and the facts read from the cubin tell an fp8 wgmma from the bf16 shortcut. One child, two
small kernels (a few seconds)."""

from __future__ import annotations

from hawkeye_env.judge.parent.decide.instructions import evidence
from hawkeye_env.judge.parent.validate.facts_check import checked_facts
from hawkeye_env.judge.sandboxed.replay.cross_compile import compile_plan
from hawkeye_env.tasks.registry import get_task

# A checked CPU plan entry (``shared/source_kernels.py``): the def without decorators and its bindings.
DOT = """def tile_dot(a_ptr, b_ptr, c_ptr, UPCAST: tl.constexpr):
    rm = tl.arange(0, 64)
    rk = tl.arange(0, 32)
    a = tl.load(a_ptr + rm[:, None] * 32 + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * 64 + rm[None, :])
    if UPCAST:
        a = a.to(tl.bfloat16)
        b = b.to(tl.bfloat16)
    acc = tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * 64 + rm[None, :], acc)"""
KERNELS = [{"name": "tile_dot", "source": DOT, "globals": {"tl": {"kind": "module", "name": "triton.language"}}}]


def _ref(base: int, dtype: str, size: list[int]) -> dict:
    return {"T": base, "dtype": dtype, "size": size, "stride": [size[1], 1], "offset": 0}


def _launch(upcast: bool) -> dict:
    args = [_ref(0, "float8_e4m3fn", [64, 32]), _ref(1, "float8_e4m3fn", [32, 64]), _ref(2, "float32", [64, 64]),
            upcast]
    return {"launch": 0, "grid": [1, 1, 1], "args": args, "options": {"num_warps": 4, "num_stages": 2}}


def test_the_cross_compile_reads_the_mma_a_gpu_would_issue(tmp_path):
    steps = [_launch(False), _launch(True), _launch(False)]
    facts = checked_facts(compile_plan(KERNELS, steps, str(tmp_path)))
    fp8, upcast = facts
    assert fp8["launches"] == 2 and upcast["launches"] == 1  # one compile per distinct specialization
    assert all(f["num_warps"] == 4 and f["num_stages"] == 2 and f["registers"] > 0 for f in facts)
    assert [op.split(".")[0] for op in fp8["mma"]] == ["QGMMA"] and all("E4M3" in op for op in fp8["mma"])
    assert [op.split(".")[0] for op in upcast["mma"]] == ["HGMMA"] and all("BF16" in op for op in upcast["mma"])
    assert any("e4m3" in x for x in fp8["ptx_mma"]) and any("bf16" in x for x in upcast["ptx_mma"])
    task = get_task("fp8_gemm_per_tensor")
    assert evidence(task, {"kernels": [fp8]})["passed"] is True
    assert evidence(task, {"kernels": [upcast]})["passed"] is False
