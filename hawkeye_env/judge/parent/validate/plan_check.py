"""The trusted parent's check of a recorded launch plan (``launch_plan.py`` says what a plan is).

``plan_problem`` says why a plan, with the reply's kernels, is not one the replay may run (None
when it is): every field well formed and bounded, values walked within ``MAX_VALUES`` (a pickle can
share one list among many), every op in the task's allowlist and no host read of device data,
every base made before it is used, launches that fit their kernels' signatures (Triton 3.6's
launcher types only), metadata and cubins of the expected form. Nothing here runs the plan.
"""

from __future__ import annotations

import json
import re

from hawkeye_env.judge.parent.validate.source_check import param_count, sources_problem
from hawkeye_env.judge.shared.launch_plan import (
    DEVICES,
    DTYPES,
    HOST_READ_OPS,
    INT_TYPES,
    KERNEL_NAME,
    LAYOUTS,
    MAX_ARGS,
    MAX_BASES,
    MAX_CONST_BYTES,
    MAX_CUBIN_BYTES,
    MAX_GRID,
    MAX_KERNEL_BYTES,
    MAX_KERNELS,
    MAX_METADATA_CHARS,
    MAX_NDIM,
    MAX_STEPS,
    MAX_VALUES,
    MEMORY_FORMATS,
    METADATA_KEY,
    SIGNATURE_TYPE,
    TL_DTYPES,
    op_packet,
)
from hawkeye_env.judge.shared.source_kernels import is_source_kernel, launch_options_problem


def _shown(x) -> str:
    """An untrusted value in a message: a short string or integer as itself, anything else by its
    type (rendering a deeply nested or huge value could raise, or take long, in the parent)."""
    if isinstance(x, str):
        return repr(x[:40])
    if _int(x) and abs(x) < 10**12:
        return str(x)
    return f"a {type(x).__name__}"


def _named(x, table) -> bool:
    """``x`` is a string that names an entry of ``table`` (other values may not be hashable)."""
    return isinstance(x, str) and x in table


def cubin_problem(data) -> str | None:
    """Why ``data`` is not an acceptable cubin (None when it is): bytes of a 64-bit little-endian
    ELF within ``MAX_CUBIN_BYTES`` whose section headers and section names are in bounds (the
    CUDA driver parses it next, in the sandboxed replay)."""
    if not isinstance(data, (bytes, bytearray)):
        return "the kernel binary is not bytes"
    if len(data) > MAX_CUBIN_BYTES:
        return f"the kernel binary has {len(data)} bytes, over {MAX_CUBIN_BYTES}"
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return "the kernel binary is not a 64-bit little-endian ELF file"
    shoff = int.from_bytes(data[0x28:0x30], "little")
    shentsize = int.from_bytes(data[0x3A:0x3C], "little")
    shnum = int.from_bytes(data[0x3C:0x3E], "little")
    shstrndx = int.from_bytes(data[0x3E:0x40], "little")
    if shentsize != 64 or shnum == 0 or shstrndx >= shnum or shoff + shnum * 64 > len(data):
        return "the kernel binary's section headers are out of bounds"

    def header(i: int) -> tuple[int, int, int]:
        at = shoff + 64 * i
        return (int.from_bytes(data[at:at + 4], "little"), int.from_bytes(data[at + 0x18:at + 0x20], "little"),
                int.from_bytes(data[at + 0x20:at + 0x28], "little"))

    _, str_off, str_size = header(shstrndx)
    if str_off + str_size > len(data):
        return "the kernel binary's section names are out of bounds"
    names = data[str_off:str_off + str_size]
    for i in range(shnum):
        name_at, off, size = header(i)
        if name_at >= len(names):
            return "a section name of the kernel binary is out of bounds"
        if off + size > len(data) and size and i != 0:
            header_type = int.from_bytes(data[shoff + 64 * i + 4:shoff + 64 * i + 8], "little")
            if header_type != 8:  # SHT_NOBITS sections (.bss-like) occupy no file bytes
                return "a section of the kernel binary lies outside the file"
    return None


def _kernel_problem(i: int, k) -> str | None:
    if not isinstance(k, dict) or set(k) != {"name", "signature", "metadata", "cubin"}:
        return f"kernel {i} is not a dict of name, signature, metadata and cubin"
    if not isinstance(k["name"], str) or not KERNEL_NAME.match(k["name"]):
        return f"kernel {i}: bad name"
    sig = k["signature"]
    if not isinstance(sig, list) or len(sig) > MAX_ARGS:
        return f"kernel {i}: the signature is not a list of at most {MAX_ARGS} types"
    for ty in sig:
        if not isinstance(ty, str) or not SIGNATURE_TYPE.match(ty):
            return f"kernel {i}: unsupported argument type {_shown(ty)}"
    if not isinstance(k["metadata"], str) or len(k["metadata"]) > MAX_METADATA_CHARS:
        return f"kernel {i}: the metadata is not text within {MAX_METADATA_CHARS} characters"
    try:
        meta = json.loads(k["metadata"])
    except (ValueError, RecursionError):
        return f"kernel {i}: the metadata is not JSON"
    if not isinstance(meta, dict) or not all(isinstance(key, str) and METADATA_KEY.match(key) for key in meta):
        return f"kernel {i}: the metadata is not an object with identifier keys"
    if meta.get("name") != k["name"]:
        return f"kernel {i}: the metadata names another kernel"
    target = meta.get("target")
    if not isinstance(target, dict) or target.get("backend") != "cuda":
        return f"kernel {i}: the metadata's target is not a CUDA GPU"
    for key in ("num_warps", "num_ctas", "shared"):
        if not isinstance(meta.get(key), int) or isinstance(meta.get(key), bool) or meta[key] < 0:
            return f"kernel {i}: metadata {key} is not a non-negative integer"
    return cubin_problem(k["cubin"])


class _Check:
    """Walks one plan's values, knowing how many bases exist at each point, at most
    ``MAX_VALUES`` of them in all."""

    def __init__(self, bases: int, kernels: list):
        self.bases = bases
        self.kernels = kernels
        self.left = MAX_VALUES
        self.source = bool(kernels) and is_source_kernel(kernels[0])  # a CPU plan: kernels as source
        self.params = [param_count(k) for k in kernels] if self.source else []

    def spent(self) -> bool:
        """Count one value; True once more than ``MAX_VALUES`` were counted."""
        self.left -= 1
        return self.left < 0

    def ref(self, v, known: int) -> str | None:
        if self.spent():
            return f"the plan holds more than {MAX_VALUES} values"
        if set(v) != {"T", "dtype", "size", "stride", "offset"}:
            return "a tensor reference has unexpected fields"
        if not _int(v["T"]) or not 0 <= v["T"] < known:
            return f"a tensor reference names base {_shown(v['T'])}, not made before it is used"
        if not _named(v["dtype"], DTYPES):
            return f"unknown dtype {_shown(v['dtype'])}"
        size, stride = v["size"], v["stride"]
        if not (isinstance(size, list) and isinstance(stride, list) and len(size) == len(stride) <= MAX_NDIM
                and all(_int(s) and s >= 0 for s in size) and all(_int(s) for s in stride)):
            return "a tensor reference has a bad size or stride"
        if not _int(v["offset"]) or v["offset"] < 0:
            return "a tensor reference has a bad storage offset"
        return None

    def value(self, v, known: int, depth: int = 0) -> str | None:
        if depth > 8:
            return "a value is nested too deeply"
        if self.spent():
            return f"the plan holds more than {MAX_VALUES} values"
        if v is None or isinstance(v, (bool, int, float, str)):
            return None if not isinstance(v, str) or len(v) <= 64 else "a string value is too long"
        if isinstance(v, list):
            if len(v) > MAX_ARGS:
                return "a list value is too long"
            return next((p for p in (self.value(x, known, depth + 1) for x in v) if p), None)
        if not isinstance(v, dict) or len(v) == 0:
            return f"a value of type {type(v).__name__}"
        if "T" in v:
            return self.ref(v, known)
        if len(v) != 1:
            return "a tagged value has more than one tag"
        (tag, x), = v.items()
        if tag == "tuple":
            return self.value(x, known, depth + 1) if isinstance(x, list) else "a tuple value is not a list"
        if tag == "dtype":
            return None if _named(x, DTYPES) else f"unknown dtype {_shown(x)}"
        if tag == "device":
            return None if _named(x, DEVICES) else f"unknown device {_shown(x)}"
        if tag == "memory_format":
            return None if _named(x, MEMORY_FORMATS) else "unknown memory format"
        if tag == "layout":
            return None if _named(x, LAYOUTS) else "unknown layout"
        if tag == "desc":
            return self.desc(x, known)
        if tag == "tl" and self.source:
            return None if _named(x, TL_DTYPES) else f"unknown Triton dtype {_shown(x)}"
        return f"unknown value tag {_shown(tag)}"

    def desc(self, d, known: int) -> str | None:
        if not isinstance(d, dict) or set(d) != {"base", "shape", "strides", "block_shape", "padding"}:
            return "a tensor descriptor has unexpected fields"
        if not isinstance(d["base"], dict) or "T" not in d["base"]:
            return "a tensor descriptor's base is not a tensor reference"
        for key in ("shape", "strides", "block_shape"):
            if not (isinstance(d[key], list) and 1 <= len(d[key]) <= 5 and all(_int(s) for s in d[key])):
                return f"a tensor descriptor's {key} is not a list of integers"
        if not _named(d["padding"], ("zero", "nan")):
            return "a tensor descriptor's padding is neither zero nor nan"
        return self.ref(d["base"], known)

    def launch(self, step: dict, known: int) -> str | None:
        k = step.get("launch")
        if not _int(k) or not 0 <= k < len(self.kernels):
            return "a launch names no kernel of the reply"
        grid = step.get("grid")
        if not (isinstance(grid, list) and len(grid) == 3 and all(_int(g) and 0 <= g <= MAX_GRID for g in grid)):
            return "a launch grid is not three integers"
        if self.source:  # a CPU launch: its options (``source_kernels.LAUNCH_OPTIONS``), then its arguments
            return launch_options_problem(step.get("options", {})) or self.source_launch(k, step.get("args"), known)
        args, sig = step.get("args"), self.kernels[k]["signature"]
        if not isinstance(args, list) or len(args) != len(sig):
            return f"a launch of {self.kernels[k]['name']} has {len(args) if isinstance(args, list) else '?'} " \
                   f"arguments for {len(sig)} parameters"
        for ty, a in zip(sig, args):
            if ty == "constexpr":
                problem = None if a is None else "a constexpr argument was not left out"
            elif ty.startswith("*"):
                problem = None if a is None else (self.ref(a, known) if isinstance(a, dict) and "T" in a
                                                  else "a pointer argument is not a tensor reference")
            elif ty.startswith("tensordesc"):
                problem = self.desc(a.get("desc"), known) if isinstance(a, dict) and set(a) == {"desc"} \
                    else "a tensor-descriptor argument is not a descriptor"
            elif ty in INT_TYPES:
                problem = None if _int(a) or isinstance(a, bool) else f"an {ty} argument is not an integer"
            else:
                problem = None if isinstance(a, (int, float)) and not isinstance(a, bool) else \
                    f"an {ty} argument is not a number"
            if problem:
                return f"kernel {self.kernels[k]['name']}: {problem}"
        return None


    def source_launch(self, k: int, args, known: int) -> str | None:
        """A CPU plan's launch: a value for every parameter of the kernel's def."""
        expected = self.params[k]
        if not isinstance(args, list) or len(args) > MAX_ARGS or expected is not None and len(args) != expected:
            return f"a launch of {self.kernels[k]['name']} does not give a value for each of its parameters"
        problem = next((p for p in (self.value(a, known) for a in args) if p), None)
        return f"kernel {self.kernels[k]['name']}: {problem}" if problem else None


def _int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _base_problem(i: int, b) -> str | None:
    if not isinstance(b, dict):
        return f"base {i} is not a dict"
    kind, nbytes = b.get("kind"), b.get("nbytes")
    if not _int(nbytes) or nbytes < 0:
        return f"base {i} has no byte count"
    if kind == "input":
        return None if set(b) == {"kind", "index", "nbytes"} and _int(b["index"]) and b["index"] >= 0 \
            else f"base {i}: a bad input base"
    if kind == "param":
        if set(b) != {"kind", "key", "nbytes", "dtype", "size", "stride", "offset"} or not isinstance(b["key"], str):
            return f"base {i}: a bad parameter base"
        return _Check(i + 1, []).ref({"T": i, **{k: b[k] for k in ("dtype", "size", "stride", "offset")}}, i + 1)
    if kind == "const":
        if set(b) != {"kind", "device", "nbytes", "data"} or not _named(b["device"], DEVICES):
            return f"base {i}: a bad constant base"
        return None if isinstance(b["data"], (bytes, bytearray)) and len(b["data"]) == nbytes \
            else f"base {i}: the constant's bytes do not match its size"
    if kind == "op":
        return None if set(b) == {"kind", "step", "nbytes"} and _int(b["step"]) else f"base {i}: a bad op base"
    return f"base {i}: unknown kind {_shown(kind)}"


def plan_problem(plan, kernels, allowed_ops: frozenset[str], device: str = "cuda") -> str | None:
    """Why ``plan`` (with the reply's ``kernels``) is not a replayable plan for a task whose
    candidates may call ``allowed_ops`` (None when it is): every field well formed and bounded
    (``MAX_VALUES`` values in all, however the reply's pickle shares them), every op in the
    allowlist, named by an overload (never a packet attribute such as ``__init__``), and no host
    read of device data, every base made before it is used
    (an op base by the step that names it), launches that fit their kernels' signatures, at
    least one launch, tensor outputs. On ``device`` "cpu" the kernels are source entries, on
    "cuda" compiled binaries."""
    if isinstance(kernels, list) and any(is_source_kernel(k) for k in kernels) != (device == "cpu"):
        return f"the kernels are not of the form a {device} plan carries"
    problem = _kernels_problem(kernels)
    if problem:
        return problem
    if not isinstance(plan, dict) or set(plan) != {"bases", "steps", "outputs"}:
        return "the plan is not a dict of bases, steps and outputs"
    bases, steps, outputs = plan["bases"], plan["steps"], plan["outputs"]
    if not (isinstance(bases, list) and isinstance(steps, list) and isinstance(outputs, list)):
        return "the plan's bases, steps and outputs are not lists"
    if len(bases) > MAX_BASES or len(steps) > MAX_STEPS:
        return f"the plan has more than {MAX_BASES} bases or {MAX_STEPS} steps"
    problem, made_by = _bases_problem(bases)
    if problem:
        return problem
    check = _Check(len(bases), kernels)
    problem = _steps_problem(steps, bases, made_by, check, allowed_ops)
    if problem:
        return problem
    if not outputs or len(outputs) > MAX_ARGS:
        return f"the plan has no outputs, or more than {MAX_ARGS}"
    for o in outputs:
        problem = check.ref(o, len(bases)) if isinstance(o, dict) and "T" in o else "an output is not a tensor"
        if problem:
            return f"output: {problem}"
    return None


def _kernels_problem(kernels) -> str | None:
    """Why the reply's ``kernels`` are not a bounded list of well-formed kernels, or None (a CPU
    plan's, as source: ``source_check.sources_problem``)."""
    if isinstance(kernels, list) and kernels and is_source_kernel(kernels[0]):
        return sources_problem(kernels)
    if not isinstance(kernels, list) or len(kernels) > MAX_KERNELS:
        return f"the kernels are not a list of at most {MAX_KERNELS}"
    for i, k in enumerate(kernels):
        problem = _kernel_problem(i, k)
        if problem:
            return problem
    if sum(len(k["cubin"]) for k in kernels) > MAX_KERNEL_BYTES:
        return f"the kernel binaries hold more than {MAX_KERNEL_BYTES} bytes in all"
    return None


def _bases_problem(bases: list) -> tuple[str | None, dict[int, int]]:
    """``(why the bases are not well formed and bounded, or None; base -> the step said to make
    it, for the bases an op makes)``."""
    const_bytes = 0
    made_by = {}
    for i, b in enumerate(bases):
        problem = _base_problem(i, b)
        if problem:
            return problem, made_by
        if b["kind"] == "const":
            const_bytes += b["nbytes"]
        if b["kind"] == "op":
            made_by[i] = b["step"]
    if const_bytes > MAX_CONST_BYTES:
        return f"the plan carries {const_bytes} bytes of constants, over {MAX_CONST_BYTES}", made_by
    return None, made_by


def _steps_problem(steps: list, bases: list, made_by: dict[int, int], check: _Check,
                   allowed_ops: frozenset[str]) -> str | None:
    """Why the plan's ``steps`` do not replay (a malformed step, an op outside ``allowed_ops``, a
    launch that does not fit its kernel, a base used before the step that makes it, a base no
    step makes, no launch at all), or None."""
    ready = {i for i, b in enumerate(bases) if b["kind"] != "op"}
    launches = 0
    for s, step in enumerate(steps):
        if not isinstance(step, dict):
            return f"step {s} is not a dict"
        known = len(bases)
        if "launch" in step:
            if set(step) - ({"options"} if check.source else set()) != {"launch", "grid", "args"}:
                return f"step {s}: a launch has unexpected fields"
            problem = check.launch(step, known)
            launches += 1
        elif "op" in step:
            problem = _op_problem(step, allowed_ops) or check.value(step["args"], known) \
                or next((p for p in (check.value(x, known) for x in step["kwargs"].values()) if p), None)
            if not problem:
                for tid in step["outs"]:
                    if tid is not None:
                        if made_by.get(tid) != s:
                            problem = f"step {s} makes base {tid}, which the plan does not say it makes"
                            break
                        ready.add(tid)
        else:
            problem = "neither an op nor a launch"
        if problem:
            return f"step {s}: {problem}"
        unready = _refs_in(step) - ready
        if unready:
            return f"step {s} uses base {min(unready)} before the step that makes it"
    if set(made_by) - ready:
        return "a base is said to be made by a step that does not make it"
    if launches == 0:
        return "the plan launches no kernel"
    return None


def _op_problem(step: dict, allowed_ops: frozenset[str]) -> str | None:
    if set(step) != {"op", "args", "kwargs", "outs"}:
        return "an op has unexpected fields"
    name = step["op"]
    if not isinstance(name, str) or not re.match(r"^aten::[A-Za-z0-9_]{1,80}(\.[A-Za-z0-9][A-Za-z0-9_]{0,39})?$", name):
        return "an op is not an aten operator name"
    packet = op_packet(name)
    if packet in HOST_READ_OPS:
        return f"aten.{packet} reads device data on the host"
    if packet not in allowed_ops:
        return f"aten.{packet} is outside the task's allowed ops"
    if not isinstance(step["args"], list) or not isinstance(step["kwargs"], dict):
        return "an op's args are not a list or its kwargs not a dict"
    if len(step["kwargs"]) > MAX_ARGS or not all(isinstance(k, str) and len(k) <= 64 for k in step["kwargs"]):
        return f"an op's keyword names are not at most {MAX_ARGS} short strings"
    if not isinstance(step["outs"], list) or len(step["outs"]) > MAX_ARGS or \
            not all(o is None or _int(o) for o in step["outs"]):
        return "an op's outs are not base indices"
    return None


def _refs_in(v) -> set[int]:
    """Base indices referenced anywhere in ``v``."""
    out: set[int] = set()
    stack = [v]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            if "T" in x and _int(x["T"]):
                out.add(x["T"])
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return out


__all__ = ["cubin_problem", "plan_problem"]
