"""Cross-compile the Gluon units' kernels for sm_90a without a GPU and report their resources.

Gluon has no interpreter, so on a machine without a Hopper GPU the only check a Gluon kernel gets
is that Triton compiles it for the H200 (``GPUTarget("cuda", 90, 32)``, Triton's bundled ptxas).
Each Gluon unit's ``kernel.py`` defines ``compile_cases()``, a list of ``CompileCase`` (its
solution's first); this module
compiles them and reads back what a profiler would otherwise tell: threads per CTA (warp
specialization shows as extra warps), registers per thread, spills and shared memory. ::

    python -m units.lib.gluon_compile [UNIT ...] [--solutions] [--json] [--shard K/N]

Registers and spills come from ``ptxas -v`` rerun on the kernel's PTX; under warp specialization
ptxas reports the launch's register count, and each partition's ``setmaxnreg`` value is read from
the PTX. The kernels are written against Triton 3.6's Gluon API (the H200's); another Triton may
refuse them, which ``compile_case`` reports as a failed case with the full error.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HOPPER_CAPABILITY = 90
WARP_SIZE = 32
# The H200's shared memory per block (cudaDevAttrMaxSharedMemoryPerBlockOptin, 227 KiB).
H200_SHARED_BYTES = 232448
GLUON_TRITON = "3.6"


@dataclass(frozen=True)
class CompileCase:
    """One kernel specialization to compile.

    Attributes:
        name: the configuration's name as the unit's README uses it.
        kernel: a ``@gluon.jit`` function.
        signature: argument name -> Triton type string (``*bf16``, ``i32``, ``tensordesc<...>``,
            ``constexpr``) for every argument, constexprs included.
        constexprs: values of the constexpr arguments.
        num_warps: warps of the default partition (the launch's ``num_warps``).
        maxnreg: the launch's register cap (``.maxnreg``); warp specialization splits it.
    """

    name: str
    kernel: Callable
    signature: dict[str, str]
    constexprs: dict[str, object] = field(default_factory=dict)
    num_warps: int = 4
    maxnreg: int | None = None


def tensordesc(dtype: str, block_shape: list[int], layout) -> str:
    """The signature string of a host ``TensorDescriptor`` argument of a Gluon kernel."""
    return f"tensordesc<{dtype}[{', '.join(map(str, block_shape))}],{layout!r}>"


def _ptxas_report(ptx: str, arch: int) -> dict:
    from triton.backends.nvidia.compiler import get_ptxas

    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "k.ptx"
        src.write_text(ptx)
        proc = subprocess.run([get_ptxas(arch).path, "-v", f"--gpu-name=sm_{arch}a", str(src), "-o",
                               str(Path(tmp) / "k.o")], capture_output=True, text=True)
    log = proc.stderr + proc.stdout
    regs = re.search(r"Used (\d+) registers", log)
    spills = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", log)
    return {"registers": int(regs.group(1)) if regs else None,
            "spill_bytes": int(spills.group(1)) + int(spills.group(2)) if spills else None,
            "ptxas_log": log.strip()}


def compile_case(case: CompileCase, arch: int = HOPPER_CAPABILITY) -> dict:
    """Compile ``case`` for ``sm_{arch}a``; never raises.

    Returns ``{"name", "ok", "triton", "threads", "registers", "spill_bytes", "shared_bytes",
    "setmaxnreg", "fits_h200", "error"}``; on failure ``error`` holds the full compiler message.
    """
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    report = {"name": case.name, "ok": False, "triton": triton.__version__, "error": ""}
    try:
        options = {"num_warps": case.num_warps} | ({"maxnreg": case.maxnreg} if case.maxnreg else {})
        src = GluonASTSource(case.kernel, case.signature, case.constexprs)
        compiled = triton.compile(src, target=GPUTarget("cuda", arch, WARP_SIZE), options=options)
    except Exception:  # a compile failure is the finding: keep the whole message
        report["error"] = traceback.format_exc()
        return report
    ptx = compiled.asm["ptx"]
    shared = compiled.metadata.shared
    report.update(ok=True, threads=compiled.metadata.num_warps * WARP_SIZE, shared_bytes=shared,
                  fits_h200=shared <= H200_SHARED_BYTES,
                  setmaxnreg=sorted({int(n) for n in re.findall(r"setmaxnreg\.\w+\.sync\.aligned\.u32\s+(\d+)", ptx)}),
                  **_ptxas_report(ptx, arch))
    return report


def gluon_units() -> list:
    """The runnable units whose solution is written in Gluon."""
    from units.lib.index import list_units

    return [u for u in list_units(include_on_paper=False) if u.language == "gluon"]


def compile_unit(unit, solution_only: bool = False, shard: tuple[int, int] = (0, 1)) -> list[dict]:
    """``compile_case`` for every case of ``unit``'s ``compile_cases()`` (named in its meta; the
    first case is the unit's solution), or for the first only; with ``shard = (k, n)`` only the
    cases whose index is ``k`` modulo ``n`` (so ``n`` processes share the compiles)."""
    from units.lib.index import resolve

    try:
        cases = resolve(unit.extra["compile_cases"])()
    except Exception:  # an import failure (another Triton's Gluon API) is reported, not raised
        return [{"name": f"{unit.name} (import)", "ok": False, "error": traceback.format_exc()}]
    k, n = shard
    return [compile_case(c) for i, c in enumerate(cases[:1 if solution_only else None]) if i % n == k]


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` -> ``(K, N)`` with ``0 <= K < N``; raises ``ValueError`` otherwise."""
    k, sep, n = text.partition("/")
    if not sep or not k.isdigit() or not n.isdigit() or not 0 <= int(k) < int(n):
        raise ValueError(f"--shard wants K/N with 0 <= K < N, got {text!r}")
    return int(k), int(n)


def _line(r: dict) -> str:
    if not r["ok"]:
        return f"  {r['name']:<34} FAILED\n" + "\n".join("    " + x for x in r["error"].rstrip().splitlines())
    return (f"  {r['name']:<34} ok  {r['threads']} threads  {r['registers']} regs  setmaxnreg {r['setmaxnreg']}  "
            f"spills {r['spill_bytes']} B  smem {r['shared_bytes']} B{'' if r['fits_h200'] else ' (over 227 KiB)'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m units.lib.gluon_compile", description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="Gluon units (default: all)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--solutions", action="store_true", help="only each unit's first case, its solution")
    parser.add_argument("--shard", type=parse_shard, default=(0, 1),
                        help="K/N: compile only the cases whose index in their unit is K modulo N")
    args = parser.parse_args(argv)
    from units.lib.index import get_unit

    units = [get_unit(n) for n in args.names] if args.names else gluon_units()
    results = {u.name: compile_unit(u, solution_only=args.solutions, shard=args.shard) for u in units}
    if args.json:
        print(json.dumps(results))
    else:
        import triton

        print(f"triton {triton.__version__}, target sm_{HOPPER_CAPABILITY}a (kernels written for Gluon {GLUON_TRITON})")
        for name, cases in results.items():
            print(name)
            print("\n".join(_line(r) for r in cases))
    return 0 if all(r["ok"] for cases in results.values() for r in cases) else 1


if __name__ == "__main__":
    sys.exit(main())
