"""e2m1 decode by byte-table lookup in PTX: eight codes (four packed bytes) per block of 23-27 instructions.

``units/block_scaled_fp4.py``'s "lut" decode. A packed byte holds two e2m1 codes along K (low
nibble = even row); the decode turns a ``[R, C]`` uint8 tile into its two bf16 planes (even and odd
K rows), each times its block scale. Triton's integer decodes spend 12.5-13.6 SASS instructions per
code in the M=32 main loop (per-element 16-bit shifts and conversions, a shuffle to interleave the
planes); here each ``tl.inline_asm_elementwise`` instance takes four bytes in one 32-bit register:

* ``and 0x77777777`` keeps the eight 3-bit magnitudes; their low 16 bits (then the high 16 bits)
  are four ``prmt`` selectors, each picking one byte from an 8-byte table: ``prmt`` with the high
  bytes of bf16(0, 0.5, 1, 1.5, 2, 3, 4, 6) and with their low bytes gives both bytes of four
  values in two instructions; two more ``prmt`` interleave them into the even and odd planes'
  bf16x2 registers.
* the sign (bit 3 of a nibble) moves to bit 15 of its bf16: ``prmt`` spreads two bytes to the high
  byte of each 16-bit half, one ``lop3`` ORs bit 15 and 31 in (after a 4-bit shift for the even
  plane's nibble).
* the block scale multiplies each bf16x2 register once (``mul.rn.bf16x2``, exact: an e2m1 value has
  two significant bits, an e8m0 scale one, an e4m3 scale four). MXFP4's e8m0 codes are built
  into bf16x2 multipliers in the block (``s << 7`` is the bf16 of ``2^(s - 127)``); NVFP4's e4m3
  scales come in as bf16 (Triton converts them).

The block is 19 instructions of decode and 4 (bf16 multipliers) or 8 (e8m0 codes) of scaling.
Compiled for sm_90 by the H200's Triton 3.6 (``python -m units.lib.triton_compile``), the M=32 main
loop over 128x128 tiles takes 5.7 (MXFP4) and 6.1 (NVFP4) SASS instructions per code, where the
"bits" decode's tiles took 13.6 and 12.5 (``bench/results/fp4-sass/fp4-loop-sass-triton36-2026-12-03.jsonl``).
PTX has no interpreter: under ``TRITON_INTERPRET=1`` the kernel decodes the same values with
Triton's integer decode (``block_scaled_fp4``), and the block's bit logic is checked on the CPU by
a model of the seven PTX instructions it uses (``tests/units/ptx_model.py``).
"""

from __future__ import annotations

import triton
import triton.language as tl

# bf16 bytes of the e2m1 magnitudes 0, 0.5, 1, 1.5 (table bytes 0-3) and 2, 3, 4, 6 (bytes 4-7):
# high bytes 00 3F 3F 3F 40 40 40 40, low bytes 00 00 80 C0 00 40 80 C0.
HIGH_TABLE = (0x3F3F3F00, 0x40404040)
LOW_TABLE = (0xC0800000, 0xC0804000)

_LOOKUP = f"""
prmt.b32 hb, {HIGH_TABLE[0]:#x}, {HIGH_TABLE[1]:#x}, s;
prmt.b32 lb, {LOW_TABLE[0]:#x}, {LOW_TABLE[1]:#x}, s;
"""
# $0, $1: even-row plane (bytes 0-1, 2-3); $2, $3: odd-row plane; $4: four packed bytes.
DECODE_BODY = ("""
.reg .b32 m, s, hb, lb, v, u;
and.b32 m, $4, 0x77777777;
mov.b32 s, m;""" + _LOOKUP + """
prmt.b32 $0, lb, hb, 0x6240;
prmt.b32 $2, lb, hb, 0x7351;
shr.b32 s, m, 16;""" + _LOOKUP + """
prmt.b32 $1, lb, hb, 0x6240;
prmt.b32 $3, lb, hb, 0x7351;
prmt.b32 v, $4, 0, 0x1404;
shl.b32 u, v, 4;
lop3.b32 $0, $0, u, 0x80008000, 0xF8;
lop3.b32 $2, $2, v, 0x80008000, 0xF8;
prmt.b32 v, $4, 0, 0x3424;
shl.b32 u, v, 4;
lop3.b32 $1, $1, u, 0x80008000, 0xF8;
lop3.b32 $3, $3, v, 0x80008000, 0xF8;
""")
# $5: four e8m0 codes, one per packed byte -> bf16x2 multipliers 2^(s - 127) (exact for 1 <= s <= 254).
E8M0_TAIL = """
prmt.b32 v, $5, 0, 0x4140;
shl.b32 v, v, 7;
prmt.b32 u, $5, 0, 0x4342;
shl.b32 u, u, 7;
mul.rn.bf16x2 $0, $0, v;
mul.rn.bf16x2 $1, $1, u;
mul.rn.bf16x2 $2, $2, v;
mul.rn.bf16x2 $3, $3, u;
"""
# $5, $6: bf16x2 multipliers of bytes 0-1 and 2-3.
BF16_TAIL = """
mul.rn.bf16x2 $0, $0, $5;
mul.rn.bf16x2 $1, $1, $6;
mul.rn.bf16x2 $2, $2, $5;
mul.rn.bf16x2 $3, $3, $6;
"""
E8M0_ASM = tl.constexpr("{" + DECODE_BODY + E8M0_TAIL + "}")
BF16_ASM = tl.constexpr("{" + DECODE_BODY + BF16_TAIL + "}")


@triton.jit
def planes_e8m0(codes, scales):
    """Packed e2m1 codes ``[R, C]`` uint8 and one e8m0 code per byte ``[R, C]`` uint8 -> (even-row
    plane, odd-row plane), each ``[R, C]`` bf16 (``value * 2^(s - 127)``). GPU only."""
    return tl.inline_asm_elementwise(E8M0_ASM, "=r,=r,=r,=r,r,r", [codes, scales],
                                     dtype=(tl.bfloat16, tl.bfloat16), is_pure=True, pack=4)


@triton.jit
def planes_bf16(codes, multipliers):
    """Packed e2m1 codes ``[R, C]`` uint8 and one bf16 multiplier per byte ``[R, C]`` -> (even-row
    plane, odd-row plane), each ``[R, C]`` bf16. GPU only."""
    return tl.inline_asm_elementwise(BF16_ASM, "=r,=r,=r,=r,r,r,r", [codes, multipliers],
                                     dtype=(tl.bfloat16, tl.bfloat16), is_pure=True, pack=4)


__all__ = ["BF16_ASM", "DECODE_BODY", "E8M0_ASM", "HIGH_TABLE", "LOW_TABLE", "planes_bf16", "planes_e8m0"]
