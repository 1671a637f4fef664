"""The "lut" FP4 decode's PTX blocks (``units/fp4_ptx.py``), run on the CPU through a model of their
instructions (``ptx_model``): every byte value in every lane decodes to both of its e2m1 values
times its scale, bit for bit; and compiled for sm_90, the M=32 main loop with the PTX decode runs
fewer SASS instructions per code than the "bits" decode it replaces (the point of the unit)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tests.units import ptx_model
from units import fp4_ptx

E2M1 = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)
E2M1 = E2M1 + tuple(-v for v in E2M1)
# Every byte value in every lane: words of four consecutive bytes, then the same rotated by one lane.
WORDS = [[(b + i) % 256 for i in range(4)] for b in range(0, 256, 4)]
WORDS += [w[1:] + w[:1] for w in WORDS]


def _word(values: list[int]) -> int:
    return sum(v << (8 * i) for i, v in enumerate(values))


def _halves(regs: list[int]) -> list[float]:
    return [ptx_model.bf16_value(r >> (16 * h)).item() for r in regs for h in range(2)]


def _expected(codes: list[int], multipliers: list[float]) -> tuple[list[float], list[float]]:
    def rounded(values):
        return torch.tensor(values, dtype=torch.float64).to(torch.bfloat16).float().tolist()
    return (rounded([E2M1[c & 0xF] * m for c, m in zip(codes, multipliers)]),
            rounded([E2M1[c >> 4] * m for c, m in zip(codes, multipliers)]))


@pytest.mark.parametrize("scales", [[127] * 4, [1, 100, 130, 254], [124, 125, 126, 131]])
def test_e8m0_block_decodes_every_byte(scales):
    for codes in WORDS:
        out = ptx_model.run(fp4_ptx.E8M0_ASM.value, [_word(codes), _word(scales)], outputs=4)
        even, odd = _expected(codes, [2.0 ** (s - 127) for s in scales])
        assert _halves(out[:2]) == even, (codes, scales)
        assert _halves(out[2:]) == odd, (codes, scales)


@pytest.mark.parametrize("scales", [[1.0, 448.0, 2.0 ** -9, 0.375], [6.5, 0.5, 3.25, 1.125]])
def test_bf16_block_decodes_every_byte(scales):
    bits = torch.tensor(scales).to(torch.bfloat16).view(torch.int16).to(torch.int32).tolist()
    multipliers = [(bits[0] & 0xFFFF) | (bits[1] & 0xFFFF) << 16, (bits[2] & 0xFFFF) | (bits[3] & 0xFFFF) << 16]
    for codes in WORDS:
        out = ptx_model.run(fp4_ptx.BF16_ASM.value, [_word(codes), *multipliers], outputs=4)
        even, odd = _expected(codes, scales)
        assert _halves(out[:2]) == even, (codes, scales)
        assert _halves(out[2:]) == odd, (codes, scales)


def test_the_model_refuses_an_instruction_it_does_not_know():
    with pytest.raises(ValueError, match="no 'add.u32'"):
        ptx_model.run("add.u32 $0, $1, 1;", [3], outputs=1)


def test_the_ptx_decode_shortens_the_m32_main_loop():
    """``python -m units.lib.triton_compile`` in a fresh process without ``TRITON_INTERPRET`` (the
    interpreter's JIT functions cannot compile): both units' M=32 loops, "bits" against "lut"."""
    lut = {"decode": "lut", "unpack": "two_dot", "expand_scales": True}
    configs = [{"unit": u, **v} for u in ("mxfp4_gemm", "nvfp4_gemm") for v in ({"decode": "bits"}, lut)]
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    proc = subprocess.run([sys.executable, "-m", "units.lib.triton_compile", *map(json.dumps, configs)],
                          cwd=Path(__file__).resolve().parents[2], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    for bits, table in (rows[0:2], rows[2:4]):
        assert bits["decode"] == "bits" and table["decode"] == "lut"
        assert table["opcodes"].get("PRMT", 0) > 0 and table["per_code"] < 0.8 * bits["per_code"], (bits, table)
