"""What a kernel's machine code says about it: registers, spills, shared memory and the instruction mix.

The trusted replay reads a compiled kernel (a cubin: the GPU plan's own, or on CPU a cross-compile
for sm_90, ``cross_compile.py``) with Triton's bundled ``cuobjdump``: ``-res-usage`` gives the
registers, local memory (stack and spills) and static shared memory per thread or block, ``-sass``
the instructions. ``sass_facts`` turns both into one JSON-ready dict:

* ``mma``: tensor-core instructions by opcode with their shape and types, e.g.
  ``QGMMA.64x128x32.F32.E4M3.E4M3`` (Hopper wgmma on fp8: accumulator then operand types),
  ``HGMMA.64x128x16.F32.BF16`` (wgmma on bf16), ``HMMA.16816.F32.BF16`` (``mma.sync``);
  ``HFMA2.MMA`` is an fp16 FMA, not a matrix instruction (``shared/mma_types.py``);
* ``global_loads`` / ``global_stores``: ``LDG`` / ``STG`` counts by access width in bits;
  ``async_copies``: ``LDGSTS`` (``cp.async``, global to shared) by width; ``tma``: the tensor
  memory accelerator's instructions (``UTMALDG``, ``UTMASTG``, ``UBLKCP``...) by opcode;
* ``spill_stores`` / ``spill_loads``: local-memory ``STL`` / ``LDL`` instructions (register
  spills and stack arrays), with ``local_bytes`` per thread from the resource usage;
* ``fma``: floating-point FMA instructions (``FFMA``, ``HFMA2``, ``DFMA``) on the CUDA cores;
* ``instructions``: every instruction of the kernel.

Counts are static (instructions in the code, not executed ones): a loop body counts once.
"""

from __future__ import annotations

import collections
import os
import re
import subprocess

from hawkeye_env.judge.shared.mma_types import is_mma

_OPCODE = re.compile(r"\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Za-z0-9_]+)*)")
_RESOURCES = re.compile(r"REG:(\d+)\s+STACK:(\d+)\s+SHARED:(\d+)\s+LOCAL:(\d+)")
_FUNCTION = re.compile(r"^\s*Function\s+(\S+):", re.M)
TMA_OPCODES = frozenset({"UTMALDG", "UTMASTG", "UTMAPF", "UTMACCTL", "UTMAREDG", "UBLKCP", "UBLKRED", "UBLKPF"})
FMA_OPCODES = frozenset({"FFMA", "HFMA2", "DFMA"})
_WIDTHS = {"U8": 8, "S8": 8, "U16": 16, "S16": 16, "64": 64, "128": 128}
# A tool that reads a cubin gets this long (seconds): cuobjdump takes well under one on a 100 KB cubin.
TOOL_TIMEOUT_S = 60


def opcodes(sass_text: str) -> collections.Counter:
    """Every instruction of ``sass_text`` by full opcode (``LDG.E.128``), predicates dropped."""
    return collections.Counter(m.group(1) for m in _OPCODE.finditer(sass_text))


def _width(opcode: str) -> int:
    """The access width in bits of an ``LDG``/``STG``/``LDGSTS`` opcode (32 unless it says)."""
    return next((_WIDTHS[m] for m in opcode.split(".")[1:] if m in _WIDTHS), 32)


def sass_facts(sass_text: str, resources: str) -> dict:
    """The facts of one kernel (module docstring) from its ``cuobjdump -sass`` and ``-res-usage``
    texts."""
    ops = opcodes(sass_text)
    facts = {"instructions": sum(ops.values()), "mma": {}, "global_loads": {}, "global_stores": {},
             "async_copies": {}, "tma": {}, "spill_stores": 0, "spill_loads": 0, "fma": 0}
    for op, n in sorted(ops.items()):
        base = op.split(".")[0]
        if is_mma(op):
            facts["mma"][op] = n
        elif base in TMA_OPCODES:
            facts["tma"][base] = facts["tma"].get(base, 0) + n
        elif base in ("LDG", "STG", "LDGSTS"):
            into = {"LDG": "global_loads", "STG": "global_stores", "LDGSTS": "async_copies"}[base]
            width = str(_width(op))
            facts[into][width] = facts[into].get(width, 0) + n
        elif base == "STL":
            facts["spill_stores"] += n
        elif base == "LDL":
            facts["spill_loads"] += n
        elif base in FMA_OPCODES and "MMA" not in op.split(".")[1:]:
            facts["fma"] += n
    used = _RESOURCES.search(resources)
    if used:
        reg, stack, shared, local = map(int, used.groups())
        facts.update(registers=reg, stack_bytes=stack, static_shared_bytes=shared, local_bytes=local)
    return facts


def _tool(args: list[str]) -> str:
    from triton import knobs

    proc = subprocess.run([knobs.nvidia.cuobjdump.path, *args], capture_output=True, text=True,
                          timeout=TOOL_TIMEOUT_S, check=True)
    return proc.stdout


def cubin_facts(cubin: bytes, folder: str, name: str) -> dict:
    """``sass_facts`` of a cubin, written to ``folder`` and read with Triton's bundled ``cuobjdump``.
    A cubin of one kernel (what Triton builds); the first function's resources are taken."""
    path = os.path.join(folder, f"{name}.cubin")
    with open(path, "wb") as f:
        f.write(cubin)
    sass_text, resources = _tool(["-sass", path]), _tool(["-res-usage", path])
    facts = sass_facts(sass_text, resources)
    found = _FUNCTION.search(sass_text)
    facts["function"] = found.group(1) if found else name
    return facts


__all__ = ["FMA_OPCODES", "TMA_OPCODES", "cubin_facts", "opcodes", "sass_facts"]
