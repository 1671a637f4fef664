"""Stand-ins for a compiled Triton kernel on CPU: the recorder and the replay see the same facts
Triton's CUDA launcher would give them, and a Python function plays the device code."""

from __future__ import annotations

import json
import struct
from collections import namedtuple
from types import SimpleNamespace


def elf(section_names: list[str]) -> bytes:
    """A minimal 64-bit little-endian ELF file with the given section names (and a name table)."""
    names = [""] + list(section_names) + [".shstrtab"]
    table = b"\x00".join(n.encode() for n in names) + b"\x00"
    offsets, at = [], 0
    for n in names:
        offsets.append(at)
        at += len(n.encode()) + 1
    header_size = 64
    table_off = header_size
    shoff = table_off + len(table)
    shoff += (-shoff) % 8
    shnum = len(names)
    ident = b"\x7fELF" + bytes([2, 1, 1]) + b"\x00" * 9
    header = ident + struct.pack("<HHIQQQIHHHHHH", 2, 190, 1, 0, 0, shoff, 0, 64, 0, 0, 64, shnum, shnum - 1)
    body = header + table + b"\x00" * (shoff - table_off - len(table))
    for i in range(shnum):
        sh_offset, sh_size = (table_off, len(table)) if i == shnum - 1 else (0, 0)
        body += struct.pack("<IIQQQQIIQQ", offsets[i], 3 if i == shnum - 1 else 1, 0, 0, sh_offset, sh_size,
                            0, 0, 1, 0)
    return body


Target = namedtuple("Target", "backend arch warp_size")


def compiled_kernel(name: str, signature: list[str], sections=(".text.k", ".nv.info")):
    """An object shaped like triton's ``CompiledKernel`` for ``PlanRecorder.launch``."""
    meta = namedtuple("Meta", "name target num_warps num_ctas shared hash")(
        name, Target("cuda", 90, 32), 4, 1, 0, f"hash-{name}")
    return SimpleNamespace(name=name, src=SimpleNamespace(signature={f"a{i}": t for i, t in enumerate(signature)}),
                           metadata=meta, asm={"cubin": elf(list(sections))})


def kernel_record(name: str, signature: list[str], sections=(".text.k", ".nv.info")) -> dict:
    """A kernel entry of a plan (what ``PlanRecorder`` makes of ``compiled_kernel``)."""
    return {"name": name, "signature": list(signature),
            "metadata": json.dumps({"name": name, "target": {"backend": "cuda", "arch": 90, "warp_size": 32},
                                    "num_warps": 4, "num_ctas": 1, "shared": 0}),
            "cubin": elf(list(sections))}
