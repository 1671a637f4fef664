"""Reading a kernel's machine code and deciding from it, on texts and numbers alone (no compile, no
GPU): the replay's SASS facts (``sandboxed/replay/sass.py``), the parent's bounds on them
(``validate/facts_check.py``), the instruction evidence (``decide/instructions.py``), the
theoretical occupancy (``profiling/report.py``), Nsight Compute's CSV and its failures
(``sandboxed/replay/nsight.py``) and the launch options a CPU plan may carry."""

from __future__ import annotations

import pytest

from hawkeye_env.judge.parent.decide.instructions import evidence
from hawkeye_env.judge.parent.profiling.report import kernel_lines, occupancy
from hawkeye_env.judge.parent.validate.facts_check import checked_counters, checked_facts
from hawkeye_env.judge.sandboxed.replay import nsight
from hawkeye_env.judge.sandboxed.replay.sass import sass_facts
from hawkeye_env.judge.shared.mma_types import is_mma, mma_operands
from hawkeye_env.judge.shared.source_kernels import launch_options_problem
from hawkeye_env.tasks.registry import get_task

FP8 = get_task("fp8_gemm_per_tensor")
# cuobjdump -sass lines as Triton 3.9's sm_90 kernels print them (an fp8 wgmma loop, cp.async, TMA,
# predicated loads, a spill, an fp16 FMA on the MMA pipe, which is no matrix instruction).
SASS = """
        /*0180*/              @!P0 LDG.E.128 R16, desc[UR4][R20.64] ;       /* 0x0000000414108981 */
        /*0190*/                   LDG.E R12, desc[UR4][R22.64] ;            /* 0x00000004160c8981 */
        /*01a0*/                   LDG.E.U16 R4, desc[UR4][R20.64+0x800] ;   /* 0x0008000414049981 */
        /*01b0*/                   LDGSTS.E.BYPASS.128 [R3], desc[UR4][R8.64] ; /* 0x0000000008037fae */
        /*01c0*/                   UTMALDG.2D [UR8], [UR10] ;                /* 0x00000000080075b4 */
        /*01d0*/                   QGMMA.64x128x32.F32.E4M3.E4M3 R24, gdesc[UR4], R24 ; /* 0x0000 */
        /*01e0*/                   QGMMA.64x128x32.F32.E4M3.E4M3 R24, gdesc[UR8], R24 ; /* 0x0000 */
        /*01f0*/                   HFMA2.MMA R5, -RZ, RZ, 0, 0 ;             /* 0x00000000ff057435 */
        /*0200*/                   FFMA R6, R7, R8, R6 ;                     /* 0x0000000807067223 */
        /*0210*/                   STL [R1], R9 ;                            /* 0x0000000901007387 */
        /*0220*/               @P1 STG.E.128 desc[UR4][R2.64], R16 ;         /* 0x0000001002001986 */
"""
RESOURCES = " Function k:\n  REG:168 STACK:8 SHARED:0 LOCAL:8 CONSTANT[0]:576 TEXTURE:0 SURFACE:0 SAMPLER:0\n"


def test_sass_facts_count_the_instruction_mix():
    f = sass_facts(SASS, RESOURCES)
    assert f["mma"] == {"QGMMA.64x128x32.F32.E4M3.E4M3": 2}
    assert f["global_loads"] == {"128": 1, "32": 1, "16": 1} and f["global_stores"] == {"128": 1}
    assert f["async_copies"] == {"128": 1} and f["tma"] == {"UTMALDG": 1}
    assert f["fma"] == 1 and f["spill_stores"] == 1 and f["spill_loads"] == 0 and f["instructions"] == 11
    assert (f["registers"], f["local_bytes"], f["stack_bytes"]) == (168, 8, 8)


def test_matrix_instructions_and_their_operand_types():
    assert mma_operands("QGMMA.64x128x32.F32.E4M3.E4M3") == ("E4M3", "E4M3")
    assert mma_operands("HGMMA.64x128x16.F32.BF16") == ("BF16",)
    assert mma_operands("HMMA.16816.F16") == ("F16",)
    assert mma_operands("HGMMA.64x128x8.F32.TF32") == ("TF32",)
    assert is_mma("HMMA.16816.F32.BF16") and not is_mma("HFMA2.MMA") and not is_mma("FFMA")


def _kernel(mma: dict, fma: int = 0) -> dict:
    return {"name": "k", "mma": mma, "fma": fma, "registers": 128, "num_warps": 8, "launches": 1}


@pytest.mark.parametrize("mma, passed", [
    ({"QGMMA.64x128x32.F32.E4M3.E4M3": 4}, True),
    ({"HGMMA.64x64x16.F32.BF16": 4}, False),  # the bf16 shortcut
    ({"QGMMA.64x128x32.F32.E4M3.E4M3": 1, "HGMMA.64x64x16.F32.BF16": 8}, False),  # a token fp8 MMA beside bf16
    ({"HGMMA.64x128x8.F32.TF32": 8}, False),  # fp32 operands on tf32 tensor cores
    ({}, False),  # CUDA-core FMAs only
])
def test_instruction_evidence_passes_only_when_every_mma_takes_the_tasks_types(mma, passed):
    found = evidence(FP8, {"kernels": [_kernel(mma, fma=64)], "seconds": 1.0})
    assert found["passed"] is passed and found["required"] == ["E4M3", "E5M2"] and found["mma"] == mma
    assert ("reach the tensor cores (" in found["message"]) is passed


def test_instruction_evidence_makes_no_claim_when_the_code_could_not_be_read():
    for reply in (None, {"error": "ptxas failed"}, {"kernels": [{"name": "k", "registers": -1}]}):
        found = evidence(FP8, reply)
        assert found["passed"] is None and "unavailable" in found["message"]
    assert evidence(get_task("gemm_bf16"), {"kernels": []}) == {}  # no precision to check


@pytest.mark.parametrize("bad", [
    "not a list", [{"name": "k", "smuggled": 1}], [{"name": "", "registers": 1}], [{"name": "k", "registers": 1.5}],
    [{"name": "k", "mma": {"x" * 200: 1}}], [{"name": "k", "ptx_mma": ["a"] * 100}], [{"name": "k"}] * 65,
    [{"name": "k", "compile_s": float("nan")}],
])
def test_malformed_facts_are_refused(bad):
    with pytest.raises(ValueError):
        checked_facts(bad)


def test_counters_are_bounded_and_checked():
    assert checked_counters({"unavailable": "x" * 5000}) == {"unavailable": "x" * 2000}
    good = {"kernels": [{"name": "k", "duration_us": 12.5, "tensor_pipe_pct": 80.0}]}
    assert checked_counters(good) == good
    for bad in ({"kernels": [{"name": "k", "duration_us": -1.0}]}, {"kernels": "x"}, {"other": 1}):
        with pytest.raises(ValueError):
            checked_counters(bad)


def test_theoretical_occupancy_and_its_limiter():
    assert occupancy(32, 0, 8) == (1.0, "registers")  # 8 blocks of 8 warps: every limit at 64 warps
    assert occupancy(168, 0, 8) == (0.125, "registers")  # 168 x 32 -> 5376 per warp, 12 warps: 1 block
    assert occupancy(64, 160 * 1024, 4) == (0.0625, "shared memory")  # one 161 KiB block per SM
    assert occupancy(None, 0, 4) is None
    line = kernel_lines({**_kernel({}), "spill_stores": 3, "spill_loads": 2, "local_bytes": 24})
    assert "24 B local memory per thread, 3 STL / 2 LDL instructions" in line[0]


CSV_HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
              '"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"')


def _csv_row(kernel_id: str, kernel: str, metric: str, unit: str, value: str) -> str:
    """One row of ``ncu --csv --print-units base`` output."""
    cells = [kernel_id, "7", "python", "h", kernel, "1", "7", "(256, 1, 1)", "(8192, 1, 1)", "0", "9.0",
             "Command line profiler metrics", metric, unit, value]
    return ",".join(f'"{c}"' for c in cells)


CSV = "\n".join(["==PROF== Connected to process 7", CSV_HEADER,
                 _csv_row("0", "_add_kernel", "gpu__time_duration.sum", "nsecond", "12,345"),
                 _csv_row("0", "_add_kernel", "dram__throughput.avg.pct_of_peak_sustained_elapsed", "%", "88.5"),
                 _csv_row("1", "_reduce", "lts__t_sector_hit_rate.pct", "%", "61.2")]) + "\n"


def test_nsight_csv_is_read_per_kernel_in_launch_order():
    rows = nsight.parse_csv(CSV)
    assert rows == [{"name": "_add_kernel", "duration_us": pytest.approx(12.345), "dram_throughput_pct": 88.5},
                    {"name": "_reduce", "l2_hit_rate_pct": 61.2}]
    assert checked_counters({"kernels": rows})["kernels"][0]["duration_us"] == pytest.approx(12.345)
    assert nsight.parse_csv("==ERROR== nothing profiled") == []


def test_a_gpu_that_cannot_be_profiled_says_why(monkeypatch, tmp_path):
    assert "administrators" in nsight.unavailable_reason(1, "==ERROR== ERR_NVGPUCTRPERM - The user does not ...")
    assert "exited with 3" in nsight.unavailable_reason(3, "boom")
    monkeypatch.setattr(nsight, "find_ncu", lambda: None)
    assert nsight.profile_plan(str(tmp_path / "job.pt"), str(tmp_path)) == {
        "unavailable": "Nsight Compute (ncu) is not installed on this machine"}
    command = nsight.ncu_command("/usr/bin/ncu", "job.pt")
    assert "--csv" in command and "--profile-from-start" in command and command[-1] == "job.pt"


def test_a_cpu_launch_may_carry_only_small_known_launch_options():
    assert launch_options_problem({"num_warps": 8, "num_stages": 3}) is None
    for bad in ({"num_warps": 0}, {"num_warps": True}, {"num_warps": 1024}, {"grid": 1}, [8]):
        assert launch_options_problem(bad) is not None
