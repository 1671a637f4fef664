"""Tensor-core instructions as the SASS names them, and the operand types their names carry.

Shared by the replay, which counts a kernel's matrix instructions by opcode (``sandboxed/replay/
sass.py``), and the parent, which decides from those opcodes whether a task's precision reached
the tensor cores (``parent/decide/instructions.py``). ::

    >>> mma_operands("QGMMA.64x128x32.F32.E4M3.E4M3"), mma_operands("HGMMA.64x128x16.F32.BF16")
    (('E4M3', 'E4M3'), ('BF16',))
"""

from __future__ import annotations

# Matrix instructions by base opcode: Volta-to-Hopper mma.sync (HMMA fp16/bf16/tf32, IMMA int8, QMMA
# fp8 on sm_89, DMMA fp64, BMMA binary) and Hopper's warpgroup wgmma (HGMMA, QGMMA fp8, IGMMA, BGMMA).
MMA_OPCODES = frozenset({"HMMA", "IMMA", "QMMA", "DMMA", "BMMA", "HGMMA", "QGMMA", "IGMMA", "BGMMA"})
# Operand and accumulator types as SASS modifiers name them.
MMA_TYPES = ("F32", "F16", "BF16", "TF32", "E4M3", "E5M2", "E2M1", "E3M2", "E2M3", "S8", "U8", "S4", "U4", "F64")


def is_mma(opcode: str) -> bool:
    """Whether ``opcode`` (``HGMMA.64x128x16.F32.BF16``) is a tensor-core matrix instruction
    (``HFMA2.MMA``, an fp16 FMA, is not)."""
    return opcode.split(".")[0] in MMA_OPCODES


def mma_operands(opcode: str) -> tuple[str, ...]:
    """The operand types of a matrix instruction: the type modifiers after the accumulator's, or
    the one type when only one is named (an fp16 accumulator of fp16 operands: ``HMMA.16816.F16``)."""
    types = tuple(t for t in opcode.split(".")[1:] if t in MMA_TYPES)
    return types if len(types) <= 1 else types[1:]


__all__ = ["MMA_OPCODES", "MMA_TYPES", "is_mma", "mma_operands"]
