"""Cross-compile a Triton kernel for the H200 (sm_90) without a GPU and count its main loop's SASS.

What a kernel costs per element of its main loop can be read before any GPU run: Triton compiles
for ``GPUTarget("cuda", 90, 32)`` with its bundled ``ptxas``, and its bundled ``cuobjdump`` prints
the SASS. ``main_loop`` takes the longest backward branch (the K loop of a GEMM) and counts its
instructions by opcode. Integer arguments named in ``divisible`` get the ``tt.divisibility=16``
attribute that Triton's launcher gives such values at run time (what lets it vectorize loads), so
the machine code is the one the GPU would run for those arguments, up to the Triton version.

``fp4_loop`` builds the signature of ``block_scaled_fp4._fp4_gemm_kernel`` for a unit
configuration and returns its loop's instructions per e2m1 code and thread (an iteration decodes
``BLOCK_K * BLOCK_N`` codes over the CTA's threads). ::

    python -m units.lib.triton_compile '{"unit": "mxfp4_gemm", "decode": "lut", ...}' ...

prints one JSON line per configuration (the unit's ``tiles_for(32)`` with the given keywords).
Run it without ``TRITON_INTERPRET`` (the interpreter replaces JIT functions, which cannot compile).
"""

from __future__ import annotations

import collections
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from units.lib.gluon_compile import HOPPER_CAPABILITY as HOPPER
from units.lib.gluon_compile import WARP_SIZE

_ADDR = re.compile(r"/\*([0-9a-f]{4,6})\*/")
_OPCODE = re.compile(r"\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)")
_BRANCH = re.compile(r"BRA (0x[0-9a-f]+)")


def compile_sm90(fn, signature: dict[str, str], constexprs: dict, divisible: tuple[str, ...] = (),
                 num_warps: int = 4, num_stages: int = 3):
    """``triton.compile`` of JIT function ``fn`` for sm_90; ``signature`` maps every argument to its
    Triton type (``*bf16``, ``i32``, ``constexpr``...)."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    attrs = {(fn.arg_names.index(name),): [["tt.divisibility", 16]] for name in divisible
             if signature.get(name) not in (None, "constexpr")}
    src = ASTSource(fn, signature, constexprs, attrs)
    return triton.compile(src, target=GPUTarget("cuda", HOPPER, WARP_SIZE),
                          options={"num_warps": num_warps, "num_stages": num_stages})


def sass(compiled) -> str:
    """The SASS text of a compiled kernel (Triton's bundled ``cuobjdump -sass``)."""
    from triton import knobs

    with tempfile.TemporaryDirectory() as tmp:
        cubin = Path(tmp) / "k.cubin"
        cubin.write_bytes(compiled.asm["cubin"])
        proc = subprocess.run([knobs.nvidia.cuobjdump.path, "-sass", str(cubin)], capture_output=True, text=True,
                              check=True)
    return proc.stdout


def main_loop(sass_text: str) -> collections.Counter:
    """Opcode counts of the instructions between the longest backward branch and its target."""
    lines = [(int(m.group(1), 16), line) for line in sass_text.splitlines() if (m := _ADDR.search(line))]
    loops = [(int(b.group(1), 16), addr) for addr, line in lines
             if (b := _BRANCH.search(line)) and int(b.group(1), 16) < addr]
    if not loops:
        return collections.Counter()
    start, end = max(loops, key=lambda span: span[1] - span[0])
    return collections.Counter(m.group(1) for addr, line in lines
                               if start <= addr <= end and (m := _OPCODE.search(line)))


# Scale format and K values per block scale of each FP4 unit (MXFP4: e8m0 per 32, NVFP4: e4m3 per 16).
FP4_UNITS = {"mxfp4_gemm": ("e8m0", 32), "nvfp4_gemm": ("e4m3", 16)}


def fp4_loop(cfg: dict, scales: str) -> dict:
    """``{"instructions", "per_code", "opcodes", "shared_bytes"}`` of the FP4 kernel's K loop for
    unit configuration ``cfg`` (``configure``'s output) and scale format ``scales`` ("e8m0" MXFP4 or
    "e4m3" NVFP4), compiled as a GPU launch with N, K and the row strides multiples of 16 would be."""
    from units.block_scaled_fp4 import _fp4_gemm_kernel

    e8m0 = scales == "e8m0"
    group = dict(FP4_UNITS.values())[scales]
    types = {"a_ptr": "*bf16", "bq_ptr": "*u8", "bs_ptr": "*u8" if e8m0 else "*fp8e4nv",
             "ts_ptr": "constexpr" if e8m0 else "*fp32", "c_ptr": "*fp32" if cfg["split_k"] > 1 else "*bf16",
             **dict.fromkeys(("M", "N", "K", "stride_am", "stride_bqk", "stride_bsk", "stride_cs", "stride_cm"), "i32")}
    constexprs = {"stride_ak": 1, "stride_bqn": 1, "stride_bsn": 1, "stride_cn": 1,
                  "BLOCK_M": cfg["block_m"], "BLOCK_N": cfg["block_n"], "BLOCK_K": cfg["block_k"],
                  "GROUP_M": cfg["group_m"], "SPLIT_K": cfg["split_k"], "SCALE_GROUP": group,
                  "DECODE": cfg["decode"], "TWO_DOT": cfg["unpack"] == "two_dot", "SWAP_AB": bool(cfg["swap_ab"]),
                  "EXPAND_SCALES": bool(cfg["expand_scales"]), "SCALES": scales, "PTX": True}
    if e8m0:
        constexprs["ts_ptr"] = None
    signature = {name: types.get(name, "constexpr") for name in _fp4_gemm_kernel.arg_names}
    divisible = ("a_ptr", "bq_ptr", "bs_ptr", "ts_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bqk",
                 "stride_bsk", "stride_cs", "stride_cm")
    compiled = compile_sm90(_fp4_gemm_kernel, signature, constexprs, divisible, cfg["num_warps"], cfg["num_stages"])
    opcodes = main_loop(sass(compiled))
    threads = cfg["num_warps"] * WARP_SIZE
    codes_per_thread = cfg["block_k"] * cfg["block_n"] / threads
    total = sum(opcodes.values())
    return {"instructions": total, "per_code": round(total / codes_per_thread, 2), "opcodes": dict(opcodes),
            "shared_bytes": compiled.metadata.shared}


def main(argv: list[str]) -> int:
    import importlib

    from units.block_scaled_fp4 import configure

    for arg in argv:
        given = json.loads(arg)
        unit = given.pop("unit")
        scales, group = FP4_UNITS[unit]
        tiles = importlib.import_module(f"units.{unit}.kernel").tiles_for(32)
        report = fp4_loop(configure(tiles, given, scales, group), scales)
        print(json.dumps({"unit": unit, **given, **report}))
    return 0


__all__ = ["FP4_UNITS", "compile_sm90", "fp4_loop", "main", "main_loop", "sass"]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
