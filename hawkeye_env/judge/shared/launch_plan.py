"""Launch plans: what a candidate's forward did on the GPU, as data a trusted process can replay.

A plan is recorded in the candidate's worker (``plan_recorder.py``) on inputs drawn from seeds the
trusted replay never uses, checked by the trusted parent (``plan_check.plan_problem``), and
replayed by a process that never imports candidate Python (``replay.py``) on the verdict's own
inputs. Everything in it is untrusted data; this module holds what a plan is and its shared
vocabulary of values, so the worker that writes it and the processes that read it agree.

Shape of a plan (JSON-able; tensors appear only as references):

* ``bases``: the storages the forward touched, one dict each, referred to by index ("tid"):
  ``{"kind": "input", "index": i, "nbytes": n}`` (the storage of forward input ``i``),
  ``{"kind": "param", "key": k, "nbytes": n, "dtype", "size", "stride", "offset"}`` (a
  parameter or buffer of the model that the replay fills from the reference model's state dict
  entry ``k``), ``{"kind": "const", "device": "cuda"|"cpu", "nbytes": n, "data": bytes}`` (a
  storage made before the forward: its bytes as recorded, data the candidate chose on inputs it
  saw, worthless on the replay's fresh inputs), ``{"kind": "op", "step": s, "nbytes": n}``
  (made by step ``s``).
* ``steps``: in call order, ``{"op": "aten::name.overload", "args": [...], "kwargs": {...},
  "outs": [tid or None, ...]}`` (one entry per tensor leaf of the op's result: the base it makes,
  or None for a view of a known storage) and ``{"launch": k, "grid": [x, y, z], "args": [...]}``
  (kernel ``k`` of the reply's kernel list, its arguments in signature order).
* ``outputs``: tensor references, the forward's results in order.

Values (``args``, ``kwargs``, launch arguments): None, bool, int, float, lists, and tagged dicts:
``{"T": tid, "dtype", "size", "stride", "offset"}`` (a typed view of a base),
``{"tuple": [...]}``, ``{"dtype": name}``, ``{"device": "cuda"|"cpu"}``,
``{"memory_format": name}``, ``{"layout": name}``, ``{"desc": {"base": ref, "shape", "strides",
"block_shape", "padding"}}`` (a Triton host tensor descriptor), ``{"tl": name}`` (a Triton dtype
passed to a kernel on CPU).

Kernels on CUDA: ``{"name", "signature": [type, ...], "metadata": text, "cubin": bytes}``: the
compiled binary and the facts Triton's own launcher is built from. On CPU a kernel is its source
(``source_kernels.py``), and a launch's ``args`` hold every parameter of its def in order. A cubin may define device
global variables: Triton's own kernels carry libdevice's constant tables in ``.nv.global.init``
(the rmsnorm, attention and GLA experts on the H200), so a rule against them would refuse honest
kernels, and a hand-made cubin can keep state there across launches. What that state can buy is
bounded by the replay (``replay.py``, "What the candidate still controls").
"""

from __future__ import annotations

import base64
import re

import torch

# Bounds on what one plan may hold. The largest expert forward (attention with its scratch)
# launches 3 kernels and dispatches about 20 ops; a plan 100x that is still milliseconds to check.
MAX_STEPS = 4096
MAX_BASES = 4096
MAX_KERNELS = 64
MAX_CUBIN_BYTES = 16 << 20  # the largest expert cubin on the H200 is well under 1 MiB
MAX_CONST_BYTES = 64 << 20  # total bytes of storages made before the forward (lookup tables, caches)
MAX_METADATA_CHARS = 1 << 16
MAX_ARGS = 512
MAX_NDIM = 8
MAX_GRID = 2**31 - 1
MAX_KERNEL_BYTES = 64 << 20  # all of a plan's cubins together
# Values (scalars, list items, tags, tensor references) in all of a plan's steps and outputs. The
# worker's reply is a pickle whose memo can make one list the item of many others, so what the
# validation walks grows exponentially with the message unless it is bounded; 1000x the largest
# expert plan (about 200 values) checks in about 0.2 s.
MAX_VALUES = 1 << 18

DTYPES = {
    str(d).removeprefix("torch."): d
    for d in (torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32,
              torch.int16, torch.int8, torch.uint8, torch.bool, torch.float8_e4m3fn, torch.float8_e5m2,
              torch.uint16, torch.uint32, torch.uint64)
}
for _name in ("float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2"):
    if hasattr(torch, _name):
        DTYPES[_name] = getattr(torch, _name)
MEMORY_FORMATS = {"contiguous_format": torch.contiguous_format, "preserve_format": torch.preserve_format,
                  "channels_last": torch.channels_last, "channels_last_3d": torch.channels_last_3d}
LAYOUTS = {"strided": torch.strided}
DEVICES = ("cuda", "cpu")

# Triton 3.6's launcher types (``ty_to_cpp`` in its CUDA driver): only these strings ever reach the C
# code of the launcher the replay compiles.
_SCALAR = r"(i1|i8|i16|i32|i64|u1|u8|u16|u32|u64|fp16|bf16|fp32|f32|fp64)"
_ELEM = r"(i1|i8|i16|i32|i64|u1|u8|u16|u32|u64|fp8e4nv|fp8e5|fp8e4b15|fp8e4b8|fp8e5b16|fp16|bf16|fp32|f32|fp64)"
_DESC = rf"tensordesc<{_ELEM}\[\d{{1,5}}(, ?\d{{1,5}}){{0,4}}\](,[A-Za-z0-9_=\[\](), .-]{{0,400}})?>"
SIGNATURE_TYPE = re.compile(rf"^(constexpr|{_SCALAR}|\*k?{_ELEM}|{_DESC})$")
INT_TYPES = ("i1", "i8", "i16", "i32", "i64", "u1", "u8", "u16", "u32", "u64")
# Host reads of device data: the launches after them could depend on the data, which the replay's
# fresh inputs would not reproduce.
HOST_READ_OPS = frozenset({"_local_scalar_dense", "item", "tolist", "equal", "is_nonzero", "nonzero"})
METADATA_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
KERNEL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,255}$")


def op_packet(name: str) -> str:
    """``"aten::add.Tensor"`` -> ``"add"``: the overload packet the task's allowlist names."""
    return name.removeprefix("aten::").split(".", 1)[0]


# Names of ``triton.language``'s dtypes: a CPU plan passes a dtype argument to a kernel as
# ``{"tl": name}``. Listed rather than read from Triton: a process that imports this module before
# it sets Triton's interpreter flag must not import Triton (it would fix Triton in its GPU mode).
TL_DTYPES = frozenset({"int1", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                       "float8e5", "float8e5b16", "float8e4nv", "float8e4b8", "float8e4b15", "float16",
                       "bfloat16", "float32", "float64"})


def _encoded_kernel(k: dict) -> dict:
    return {**k, "cubin": base64.b64encode(k["cubin"]).decode("ascii")} if "cubin" in k else k


def _decoded_kernel(k: dict) -> dict:
    return {**k, "cubin": base64.b64decode(k["cubin"])} if "cubin" in k else k


def to_job(entries: list[dict]) -> list[dict]:
    """Recorded ``{"shape", "layout", "plan", "kernels", "warm"}`` entries with their bytes as base64 text, for the
    replay's JSON job (``from_job`` undoes it)."""
    out = []
    for e in entries:
        plan = {**e["plan"], "bases": [
            {**b, "data": base64.b64encode(b["data"]).decode("ascii")} if b["kind"] == "const" else b
            for b in e["plan"]["bases"]]}
        kernels = [_encoded_kernel(k) for k in e["kernels"]]
        out.append({"shape": e["shape"], "layout": e.get("layout"), "plan": plan, "kernels": kernels,
                    "warm": bool(e.get("warm"))})
    return out


def from_job(entries: list[dict]) -> list[dict]:
    out = []
    for e in entries:
        plan = {**e["plan"], "bases": [
            {**b, "data": base64.b64decode(b["data"])} if b["kind"] == "const" else b for b in e["plan"]["bases"]]}
        kernels = [_decoded_kernel(k) for k in e["kernels"]]
        out.append({"shape": e["shape"], "layout": e.get("layout"), "plan": plan, "kernels": kernels,
                    "warm": bool(e.get("warm"))})
    return out



__all__ = ["DTYPES", "HOST_READ_OPS", "TL_DTYPES", "from_job", "op_packet", "to_job"]
