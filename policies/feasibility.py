"""Whether a knob configuration of a Triton source is plausibly compilable on a Hopper GPU.

The search policy (``policies/search.py``) mutates tuning-knob literals; some combinations cannot
compile in reasonable time: a 128x512 float32 accumulator over 4 warps is 512 registers a thread,
twice the register file, and ptxas spilled it for more than the judge's 300 s per-candidate timeout
on an H200. This module estimates, from a source's knob values alone, the per-thread and per-CTA
resources such a configuration needs and compares them with Hopper's limits:

- ``acc_registers``: float32 accumulator values a thread holds for a ``BLOCK_M x BLOCK_N`` tile,
  ``BLOCK_M * BLOCK_N / (32 * num_warps)``;
- ``shared_memory_bytes``: the K pipeline's operand ring,
  ``num_stages * (BLOCK_M * BLOCK_K + BLOCK_K * BLOCK_N) * 2`` (16-bit operands);
- ``block_elements_per_thread``: elements of a 1-D ``BLOCK`` each thread holds,
  ``BLOCK / (32 * num_warps)``.

An estimate applies only when every knob it needs is present. A source may hold several kernels
or several assignments of a knob (defaults and module constants), and the knobs are not matched to
their kernel, so the values are conservative: the largest tile sides, block and stage count, and
the fewest warps found. A conservative estimate must not block what a known-good source already
does, so ``acceptable`` compares a child with its parent: each estimate must be within its limit
or no larger than the parent's.

Example::

    from policies.feasibility import acceptable, estimates, knob_values
    from policies.search import knob_sites
    estimates(knob_values(knob_sites(source)))   # {"acc_registers": 128.0, ...}
    acceptable(knob_values(knob_sites(parent)), knob_values(knob_sites(child)))
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

# Knob names by what they size, matched against a name without leading or trailing underscores.
# ``policies/search.py`` builds its ``KNOBS`` from these patterns, so both modules read the same names.
# Upper case for constants and constexpr parameters, lower case for launch keywords and config
# dicts (``block_m=64``, ``{"block_m": 64}``).
BLOCK_1D_NAME = re.compile(r"(BLOCK|BLOCK_SIZE|[XYR]BLOCK|block|block_size)")
# Tile sides: M, N, K of a GEMM tile; T, D, V elsewhere.
TILE_SIDE_NAME = re.compile(r"(BLOCK|BLOCK_SIZE|B)_?[MNKTDV]|block_[mnktdv]")
NUM_WARPS_NAME = re.compile(r"(num_warps|NUM_WARPS)")
NUM_STAGES_NAME = re.compile(r"(num_stages|NUM_STAGES)")

THREADS_PER_WARP = 32
# Bytes of one GEMM operand element: the suite's GEMMs load bf16 (or fp16) A and B tiles.
OPERAND_BYTES = 2

ACC_REGISTERS = "acc_registers"
SHARED_MEMORY_BYTES = "shared_memory_bytes"
BLOCK_ELEMENTS_PER_THREAD = "block_elements_per_thread"

# A thread addresses at most 255 32-bit registers (CUDA C++ Programming Guide, "Technical
# Specifications per Compute Capability", compute capability 9.0). 128x256 tiles over 4 warps, 256
# accumulator values a thread, is the largest accumulator the repository's GEMMs compile
# (units/warp_specialization's tile_ and persistent_128x256x64_s3_w4_ws); 128x512 over 4 warps
# (512) ran ptxas past the judge's 300 s timeout on an H200, and others failed ptxas with
# "Insufficient registers".
ACC_REGISTER_LIMIT = 256
# Shared memory a thread block may opt in to on compute capability 9.0 (H100, H200): 227 KB
# (CUDA C++ Programming Guide, same table; cudaDevAttrMaxSharedMemoryPerBlockOptin = 232448).
SHARED_MEMORY_LIMIT = 227 * 1024
# A 1-D kernel keeps at least two block-sized tensors live (a load and its result), one 32-bit
# register per element each, so 128 elements a thread already fill the 255-register file. (The
# search's own bounds, BLOCK <= 16384 and num_warps >= 1, reach 512 elements a thread.)
BLOCK_ELEMENTS_LIMIT = 128

LIMITS: dict[str, float] = {
    ACC_REGISTERS: ACC_REGISTER_LIMIT,
    SHARED_MEMORY_BYTES: SHARED_MEMORY_LIMIT,
    BLOCK_ELEMENTS_PER_THREAD: BLOCK_ELEMENTS_LIMIT,
}


class Knob(Protocol):
    """A knob literal as ``policies.search.knob_sites`` finds it: the name it sets and its value."""

    name: str
    value: int


@dataclass(frozen=True)
class KnobValues:
    """A source's conservative knob values (None where the source sets no such knob).

    Attributes:
        block_m, block_n, block_k: the largest GEMM tile sides (names ending in M, N, K).
        block: the largest 1-D block (``BLOCK``, ``BLOCK_SIZE``, ``XBLOCK``...).
        num_warps: the fewest warps.
        num_stages: the most pipeline stages.
    """

    block_m: int | None = None
    block_n: int | None = None
    block_k: int | None = None
    block: int | None = None
    num_warps: int | None = None
    num_stages: int | None = None


def _largest(values: list[int]) -> int | None:
    return max(values) if values else None


def knob_values(knobs: Iterable[Knob]) -> KnobValues:
    """The conservative ``KnobValues`` of ``knobs`` (e.g. ``knob_sites(source)``)."""
    sides: dict[str, list[int]] = {"M": [], "N": [], "K": []}
    blocks: list[int] = []
    warps: list[int] = []
    stages: list[int] = []
    for knob in knobs:
        name = knob.name.strip("_")
        if BLOCK_1D_NAME.fullmatch(name):
            blocks.append(knob.value)
        elif TILE_SIDE_NAME.fullmatch(name) and name[-1].upper() in sides:
            sides[name[-1].upper()].append(knob.value)
        elif NUM_WARPS_NAME.fullmatch(name):
            warps.append(knob.value)
        elif NUM_STAGES_NAME.fullmatch(name):
            stages.append(knob.value)
    return KnobValues(block_m=_largest(sides["M"]), block_n=_largest(sides["N"]), block_k=_largest(sides["K"]),
                      block=_largest(blocks), num_warps=min(warps) if warps else None, num_stages=_largest(stages))


def estimates(values: KnobValues) -> dict[str, float]:
    """Each estimate (see the module docstring) whose knobs are all present, by name."""
    out: dict[str, float] = {}
    m, n, k, warps = values.block_m, values.block_n, values.block_k, values.num_warps
    if m is not None and n is not None and warps is not None:
        out[ACC_REGISTERS] = m * n / (THREADS_PER_WARP * warps)
    if m is not None and n is not None and k is not None and values.num_stages is not None:
        out[SHARED_MEMORY_BYTES] = float(values.num_stages * (m * k + k * n) * OPERAND_BYTES)
    if values.block is not None and warps is not None:
        out[BLOCK_ELEMENTS_PER_THREAD] = values.block / (THREADS_PER_WARP * warps)
    return out


def rejections(parent: KnobValues, child: KnobValues) -> list[str]:
    """Names of the child's estimates that exceed both their limit and the parent's value."""
    before = estimates(parent)
    return [name for name, value in estimates(child).items()
            if value > LIMITS[name] and value > before.get(name, LIMITS[name])]


def acceptable(parent: KnobValues, child: KnobValues) -> bool:
    """Whether ``child`` (a mutation of ``parent``) is plausibly compilable: every estimate is within
    its limit or no larger than the parent's, whose configuration is known to compile."""
    return not rejections(parent, child)
