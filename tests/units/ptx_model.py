"""A model of the few PTX instructions ``units/fp4_ptx.py``'s blocks use, to run them on the CPU.

Registers are 32-bit Python ints. ``run(asm, inputs)`` executes a block line by line: ``and``,
``shl``, ``shr``, ``mov`` (``.b32``), ``prmt.b32`` (default mode: result byte ``i`` is byte
``c[4i+2:4i]`` of the 8-byte ``{b, a}``, ``a`` bytes 0-3, sign-replicated when ``c[4i+3]`` is set),
``lop3.b32`` (any 8-bit truth table) and ``mul.rn.bf16x2`` (each half multiplied in float32 and
rounded to nearest even in bf16 by torch, which is exact for these operands). ``$i`` are the
operands in constraint order; an instruction the model does not know raises.
"""

from __future__ import annotations

import re

import torch

MASK = 0xFFFFFFFF


def prmt(a: int, b: int, c: int) -> int:
    source = [(a >> (8 * i)) & 0xFF for i in range(4)] + [(b >> (8 * i)) & 0xFF for i in range(4)]
    out = 0
    for i in range(4):
        sel = (c >> (4 * i)) & 0xF
        byte = source[sel & 7]
        if sel & 8:
            byte = 0xFF if byte & 0x80 else 0
        out |= byte << (8 * i)
    return out


def lop3(a: int, b: int, c: int, table: int) -> int:
    out = 0
    for bit in range(32):
        index = (((a >> bit) & 1) << 2) | (((b >> bit) & 1) << 1) | ((c >> bit) & 1)
        out |= ((table >> index) & 1) << bit
    return out


def bf16_value(bits: int) -> torch.Tensor:
    return torch.tensor([bits & 0xFFFF], dtype=torch.int32).to(torch.int16).view(torch.bfloat16)


def mul_bf16x2(x: int, y: int) -> int:
    out = 0
    for half in range(2):
        product = (bf16_value(x >> (16 * half)).float() * bf16_value(y >> (16 * half)).float()).to(torch.bfloat16)
        out |= (int(product.view(torch.int16).item()) & 0xFFFF) << (16 * half)
    return out


_OPS = {
    "and.b32": lambda a, b: a & b,
    "shl.b32": lambda a, b: (a << b) & MASK,
    "shr.b32": lambda a, b: a >> b,
    "mov.b32": lambda a: a,
    "prmt.b32": prmt,
    "lop3.b32": lop3,
    "mul.rn.bf16x2": mul_bf16x2,
}


def run(asm: str, inputs: list[int], outputs: int) -> list[int]:
    """Execute ``asm`` with ``$outputs``, ``$outputs+1``... bound to ``inputs``; returns ``$0``..."""
    regs = {f"${outputs + i}": v & MASK for i, v in enumerate(inputs)}
    for raw in asm.splitlines():
        line = raw.strip().rstrip(";").strip()
        if not line or line in "{}" or line.startswith(".reg"):
            continue
        op, _, rest = line.partition(" ")
        if op not in _OPS:
            raise ValueError(f"the model has no {op!r}")
        dest, *args = [x.strip() for x in rest.split(",")]
        values = [regs[x] if x in regs else int(x, 0) for x in args]
        if not re.fullmatch(r"\$?\w+", dest):
            raise ValueError(f"bad destination {dest!r}")
        regs[dest] = _OPS[op](*values) & MASK
    return [regs[f"${i}"] for i in range(outputs)]
