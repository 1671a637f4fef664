"""Cross-compiling a CPU plan's kernels for the H100/H200 (sm_90), without a GPU, in the trusted replay.

A CPU plan carries each kernel as checked source (``shared/source_kernels.py``) and each launch as
its arguments and launch options (``num_warps``, ``num_stages``...). Triton compiles for
``GPUTarget("cuda", 90, 32)`` with its bundled ``ptxas`` whether or not a GPU is present, so the
machine code a GPU would run can be read on CPU. The replay's own process runs Triton's interpreter
(its kernels are Python functions, which cannot compile), so ``compile_plan`` runs this module as a
child process with the interpreter off, in the replay's sandbox and scratch folder, its Triton
cache there too (never a lane's shared cache). The child rebuilds the kernels from their checked
source with ``source_rebuild.build_kernels`` (never importing the candidate's module, exactly as
the replay does), turns each launch's recorded arguments into values Triton specializes the same
way it would on the GPU (a pointer's dtype and 16-byte alignment, an integer's divisibility by 16,
constexprs), binds them with Triton's own launcher binder, compiles each distinct specialization
once and reads the cubin (``sass.cubin_facts``).

What the compile cannot match: a kernel behind ``triton.autotune`` is compiled with the
configuration the CPU run picked (the interpreter's timings, not the GPU's), and Gluon kernels
(no interpreter) appear on CPU only as the Triton twins their units fall back to.

Run as ``python -m hawkeye_env.judge.sandboxed.replay.cross_compile`` with a JSON job on stdin
(``{"kernels", "launches", "folder"}``); it prints a JSON list with one entry per compiled kernel.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

HOPPER = 90  # sm_90: the H100 and H200 the suite is judged on
WARP_SIZE = 32
# A child that compiles every kernel of a plan gets this long: one GEMM kernel took 3-6 s and an
# fp32 dot with IEEE precision 18 s on one core of the development machine (Triton 3.9, 2026-12-06).
COMPILE_TIMEOUT_S = 240


# Torch dtype names (``launch_plan.DTYPES``) to Triton's, for the pointers the compile specializes on.
_TL_NAMES = {"bool": "int1", "float8_e4m3fn": "float8e4nv", "float8_e5m2": "float8e5", "float8_e4m3fnuz": "float8e4b8",
             "float8_e5m2fnuz": "float8e5b16", "float8_e8m0fnu": "uint8", "float4_e2m1fn_x2": "uint8"}


class Pointer:
    """What Triton's launcher specializes a tensor argument on, without torch: its element type and
    its address modulo 16 bytes (a plan view at element ``offset`` of a 16-byte aligned storage)."""

    def __init__(self, dtype_name: str, offset: int):
        import triton.language as tl

        self.dtype = getattr(tl, _TL_NAMES.get(dtype_name, dtype_name))
        self._address = 1024 + (offset * max(1, self.dtype.primitive_bitwidth // 8)) % 16

    def data_ptr(self) -> int:
        return self._address


def _aligned_tensor(dtype_name: str, offset: int):
    """A CPU tensor of the view's dtype and alignment: a descriptor's base (Triton's host descriptor
    reads the element size and kind from a torch dtype)."""
    import torch

    from hawkeye_env.judge.shared.launch_plan import DTYPES

    dtype = DTYPES[dtype_name]
    per = max(1, 16 // torch.empty(0, dtype=dtype).element_size())
    return torch.empty(per * 2, dtype=dtype)[offset % per:]


def argument(a):
    """A recorded launch argument as the value Triton's binder specializes: a tensor reference as a
    ``Pointer``, a descriptor as Triton's host descriptor, ``{"tl": name}`` as that Triton dtype, a
    tagged tuple as a tuple, a literal as itself."""
    import triton.language as tl

    if isinstance(a, dict) and "T" in a:
        return Pointer(a["dtype"], int(a["offset"]))
    if isinstance(a, dict) and "desc" in a:
        from triton.tools.tensor_descriptor import TensorDescriptor

        d = a["desc"]
        base = _aligned_tensor(d["base"]["dtype"], int(d["base"]["offset"]))
        return TensorDescriptor(base, d["shape"], d["strides"], d["block_shape"], d["padding"])
    if isinstance(a, dict) and "tl" in a:
        return getattr(tl, a["tl"])
    if isinstance(a, dict) and "tuple" in a:
        return tuple(argument(x) for x in a["tuple"])
    return a


def _specialize(fn, backend, args: list, options: dict):
    """``(key, signature, constexprs, attrs, options)`` of one launch, as ``JITFunction.run`` makes
    them before it compiles (Triton 3.9's binder and ``_pack_args``)."""
    from triton import knobs
    from triton.runtime.jit import create_function_from_signature

    from hawkeye_env.judge.shared.source_kernels import LAUNCH_OPTIONS

    kwargs = {k: v for k, v in options.items() if k in LAUNCH_OPTIONS and v is not None}
    kwargs["debug"] = bool(fn.debug or knobs.runtime.debug)
    for name in ("instrumentation_mode", "fpsan_homomorphic_casts"):
        if hasattr(knobs.compilation, name):
            kwargs[name] = getattr(knobs.compilation, name)
    binder = create_function_from_signature(fn.signature, fn.params, backend)
    bound, specialization, opts = binder(*[argument(a) for a in args], **kwargs)
    opts, signature, constexprs, attrs = fn._pack_args(backend, kwargs, bound, specialization, opts)
    key = repr((specialization, sorted(opts.__dict__.items(), key=lambda kv: kv[0])))
    return key, signature, constexprs, attrs, opts


def compile_launches(kernels: list[dict], launches: list[dict], folder: str) -> list[dict]:
    """One entry per distinct compiled kernel of ``launches`` (``{"launch": i, "args", "options"}``
    over the checked entries ``kernels``): ``sass.cubin_facts`` plus its name, launch count,
    warps, stages, dynamic shared memory, PTX matrix instructions and compile time, or
    ``{"name", "error"}`` when it does not compile."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource, make_backend

    from hawkeye_env.judge.sandboxed.replay.sass import cubin_facts
    from hawkeye_env.judge.sandboxed.replay.source_rebuild import build_kernels

    target = GPUTarget("cuda", HOPPER, WARP_SIZE)
    backend = make_backend(target)
    built = build_kernels(kernels, folder)
    done: dict[tuple, dict] = {}
    for step in launches:
        fn, name = built[step["launch"]], kernels[step["launch"]]["name"]
        try:
            key, signature, constexprs, attrs, opts = _specialize(fn, backend, step["args"], step.get("options") or {})
        except Exception as exc:  # noqa: BLE001 - a launch Triton's binder refuses is reported, not fatal
            done.setdefault((step["launch"], "error"), {"name": name, "error": f"{type(exc).__name__}: {exc}"[:500]})
            continue
        if (step["launch"], key) in done:
            done[(step["launch"], key)]["launches"] += 1
            continue
        started = time.monotonic()
        try:
            compiled = triton.compile(ASTSource(fn, signature, constexprs, attrs), target=target,
                                      options=opts.__dict__)
        except Exception as exc:  # noqa: BLE001 - the candidate's kernel does not compile for sm_90
            done[(step["launch"], key)] = {"name": name, "launches": 1, "error": f"{type(exc).__name__}: {exc}"[:500]}
            continue
        facts = cubin_facts(compiled.asm["cubin"], folder, f"{name}-{len(done)}")
        facts.update(name=name, launches=1, num_warps=compiled.metadata.num_warps,
                     num_stages=compiled.metadata.num_stages, shared_bytes=compiled.metadata.shared,
                     ptx_mma=ptx_mma(compiled.asm["ptx"]), compile_s=time.monotonic() - started)
        done[(step["launch"], key)] = facts
    return list(done.values())


def ptx_mma(ptx: str) -> list[str]:
    """The distinct matrix instructions of a PTX text (``wgmma.mma_async...f32.e4m3.e4m3``)."""
    import re

    return sorted(set(re.findall(r"\b(wgmma\.mma_async[\w.]*|mma\.sync[\w.]*)", ptx)))


def compile_plan(kernels: list[dict], steps: list[dict], folder: str,
                 timeout_s: float = COMPILE_TIMEOUT_S) -> list[dict]:
    """``compile_launches`` of a CPU plan's kernels and launch ``steps``, run in a child process
    with Triton's interpreter off (module docstring). Raises ``RuntimeError`` with the child's
    error when it fails or runs past ``timeout_s``."""
    launches = [{"launch": s["launch"], "args": s["args"], "options": s.get("options") or {}}
                for s in steps if "launch" in s]
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    # the candidate's compiled kernels stay in this job's folder, never in a lane's shared cache
    env["TRITON_CACHE_DIR"] = os.path.join(folder, "triton-cache")
    job = json.dumps({"kernels": kernels, "launches": launches, "folder": folder})
    try:
        proc = subprocess.run([sys.executable, "-m", __name__], input=job, capture_output=True, text=True,
                              timeout=timeout_s, env=env, cwd=folder)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"the cross-compile for sm_{HOPPER} ran past {timeout_s:.0f} s") from None
    if proc.returncode != 0:
        raise RuntimeError(f"the cross-compile for sm_{HOPPER} failed: {proc.stderr.strip()[-1500:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    job = json.loads(sys.stdin.read())
    facts = compile_launches(job["kernels"], job["launches"], job["folder"])
    sys.stdout.write(json.dumps(facts) + "\n")
    return 0


__all__ = ["COMPILE_TIMEOUT_S", "HOPPER", "Pointer", "argument", "compile_launches", "compile_plan", "ptx_mma"]

if __name__ == "__main__":
    sys.exit(main())
