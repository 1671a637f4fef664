"""Recording a forward's launch plan in the candidate's worker (``launch_plan.py`` says what a plan is).

``PlanRecorder`` is a ``TorchDispatchMode`` that, while active, appends every aten op the forward
dispatches, and (through ``install_launch_hooks``) every launch that reaches Triton's CUDA launcher,
whatever path called it (``JITFunction.run``, an autotuner, a compiled kernel's ``[grid]``).
Storages are told apart by their data pointer: a storage made by a recorded op is an op base; the
forward's inputs and the model's parameters are named as such; any other storage the forward reads
was made before it (in ``__init__``, a cache) and travels as a constant. Launches inside an
autotuner's benchmarking are not recorded (the first call of an autotuned kernel benchmarks its
configurations; the plan is the call the kernel settles on).

Nothing here is a defence: the candidate controls this process and may write any plan it likes.
The trusted parent validates the plan and a trusted process replays it on inputs the candidate
never saw (``replay.py``); a plan that does not compute the task fails there.

A forward is refused (``NotReplayable``) when the plan could not reproduce it: a host read of
device data (``.item()``, ``.cpu()``: later launches could depend on the data), a launch whose
compiled kernel is unknown, a pointer argument that is not a tensor, a non-tensor output.
"""

from __future__ import annotations

import json
import threading

import torch
from torch.utils._python_dispatch import _disable_current_modes
from torch.utils._pytree import tree_flatten

from hawkeye_env.judge.sandboxed.candidate.dispatch_mode import JudgeDispatchMode
from hawkeye_env.judge.shared.launch_plan import HOST_READ_OPS, MAX_CONST_BYTES, MEMORY_FORMATS

_ACTIVE = threading.local()


class NotReplayable(Exception):
    """The forward did something a launch plan cannot reproduce; the message says what."""


def _dtype_name(d: torch.dtype) -> str:
    return str(d).removeprefix("torch.")


class PlanRecorder(JudgeDispatchMode):
    """Records one forward call: ``with PlanRecorder(inputs, params) as rec: outs = model(*inputs)``,
    then ``rec.plan(outs)`` and ``rec.kernels``. ``params`` are the model's parameters and buffers
    by state-dict key; ``device`` is where kernel pointer arguments must live ("cuda"; "cpu" for
    tests with stand-in kernels)."""

    def __init__(self, inputs: list, params: dict[str, torch.Tensor], device: str = "cuda"):
        super().__init__()
        self.device = device  # where kernel pointer arguments must live
        self.bases: list[dict] = []
        self.steps: list[dict] = []
        self.kernels: list[dict] = []
        self._kernel_index: dict[int, int] = {}
        self._storage: dict[tuple[str, int], int] = {}
        self._alive: list = []  # every tensor seen stays alive, so no data pointer is reused meanwhile
        self._const_bytes = 0
        self.suspended = 0
        self.refusal: str | None = None
        for i, x in enumerate(inputs):
            if isinstance(x, torch.Tensor):
                self._add(x, {"kind": "input", "index": i})
        for key, p in params.items():
            if isinstance(p, torch.Tensor) and self._key(p) not in self._storage:
                self._add(p, {"kind": "param", "key": key, "dtype": _dtype_name(p.dtype), "size": list(p.shape),
                              "stride": list(p.stride()), "offset": p.storage_offset()})

    # storages -------------------------------------------------------------------------------
    @staticmethod
    def _key(t: torch.Tensor) -> tuple[str, int]:
        storage = t.untyped_storage()
        ptr = storage.data_ptr()
        return (t.device.type, ptr if storage.nbytes() and ptr else -id(storage))

    def _add(self, t: torch.Tensor, base: dict) -> int:
        tid = len(self.bases)
        self.bases.append({**base, "nbytes": t.untyped_storage().nbytes()})
        self._storage[self._key(t)] = tid
        self._alive.append(t)
        return tid

    def _const(self, t: torch.Tensor) -> int:
        storage = t.untyped_storage()
        self._const_bytes += storage.nbytes()
        if self._const_bytes > MAX_CONST_BYTES:
            raise NotReplayable(f"the forward reads {self._const_bytes} bytes of tensors made before it "
                                f"(over {MAX_CONST_BYTES}); make them inside forward or as parameters")
        # The copy below is the recorder's, not the forward's: no dispatch mode sees it, so neither
        # this recorder nor the op guard outside it (``guards.OpRecorder``) counts it as the
        # forward's ops (a constant would otherwise fail the op allowlist).
        self.suspended += 1
        try:
            with _disable_current_modes():
                raw = torch.empty(0, dtype=torch.uint8, device=t.device).set_(storage)
                # an empty ``bytes`` pickles as a call of ``bytes()``, which torch.load(weights_only=True) refuses
                data = raw.cpu().numpy().tobytes() if raw.numel() else bytearray()
        finally:
            self.suspended -= 1
        return self._add(t, {"kind": "const", "device": t.device.type, "data": data})

    def ref(self, t: torch.Tensor) -> dict:
        """A typed view of ``t``'s storage; a storage not seen before becomes a constant."""
        if t.device.type not in ("cuda", "cpu") or t.layout is not torch.strided or t.is_quantized:
            raise NotReplayable(f"a {t.layout} tensor on {t.device.type}")
        tid = self._storage.get(self._key(t))
        if tid is None:
            tid = self._const(t)
        return {"T": tid, "dtype": _dtype_name(t.dtype), "size": list(t.shape), "stride": list(t.stride()),
                "offset": t.storage_offset()}

    # values -----------------------------------------------------------------------------------
    def encode(self, v, depth: int = 0):
        if depth > 8:
            raise NotReplayable("an op argument is nested too deeply")
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        if isinstance(v, torch.Tensor):
            return self.ref(v)
        if isinstance(v, list):
            return [self.encode(x, depth + 1) for x in v]
        if isinstance(v, tuple):
            return {"tuple": [self.encode(x, depth + 1) for x in v]}
        if isinstance(v, torch.dtype):
            return {"dtype": _dtype_name(v)}
        if isinstance(v, torch.device):
            return {"device": v.type}
        if isinstance(v, torch.memory_format):
            name = next((k for k, f in MEMORY_FORMATS.items() if f == v), None)
            if name is None:
                raise NotReplayable(f"memory format {v}")
            return {"memory_format": name}
        if isinstance(v, torch.layout):
            if v is not torch.strided:
                raise NotReplayable(f"layout {v}")
            return {"layout": "strided"}
        if isinstance(v, (torch.SymInt, torch.SymFloat)):
            raise NotReplayable("a symbolic size")
        raise NotReplayable(f"an op argument of type {type(v).__name__}")

    # ops --------------------------------------------------------------------------------------
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self.suspended or self.refusal:
            return func(*args, **kwargs)
        packet = func.overloadpacket.__name__
        leaves = [x for x in tree_flatten((args, kwargs))[0] if isinstance(x, torch.Tensor)]
        on_gpu = any(x.device.type == self.device for x in leaves)
        try:
            if packet in HOST_READ_OPS and on_gpu:
                raise NotReplayable(f"the forward reads device data on the host (aten.{packet}): its launches "
                                    "could depend on the data")
            step = {"op": func.name(), "args": self.encode(list(args)),
                    "kwargs": {k: self.encode(v) for k, v in kwargs.items()}, "outs": []}
        except NotReplayable as exc:
            self.refusal = str(exc)
            return func(*args, **kwargs)
        out = func(*args, **kwargs)
        for x in tree_flatten(out)[0]:
            if not isinstance(x, torch.Tensor):
                step["outs"].append(None)
                continue
            if on_gpu and self.device != "cpu" and x.device.type == "cpu":
                self.refusal = (f"the forward copies device data to the host (aten.{packet}): its launches could "
                                "depend on the data")
            if self._key(x) in self._storage:
                step["outs"].append(None)
            else:
                step["outs"].append(self._add(x, {"kind": "op", "step": len(self.steps)}))
        self.steps.append(step)
        return out

    # launches ---------------------------------------------------------------------------------
    def launch(self, compiled, grid: tuple[int, int, int], args: tuple) -> None:
        """One launch reaching Triton's CUDA launcher: ``compiled`` its ``CompiledKernel``,
        ``args`` the kernel's arguments in signature order (constexprs included)."""
        if self.suspended or self.refusal:
            return
        try:
            k = self._kernel(compiled)
            signature = self.kernels[k]["signature"]
            if len(args) != len(signature):
                raise NotReplayable(f"kernel {compiled.name} got {len(args)} arguments for {len(signature)} parameters")
            self.steps.append({"launch": k, "grid": [int(g) for g in grid],
                               "args": [self._launch_arg(ty, a) for ty, a in zip(signature, args)]})
        except NotReplayable as exc:
            self.refusal = str(exc)

    def _kernel(self, compiled) -> int:
        if id(compiled) in self._kernel_index:
            return self._kernel_index[id(compiled)]
        if compiled is None:
            raise NotReplayable("a launch whose compiled kernel is unknown")
        signature = list(getattr(compiled.src, "signature", {}).values())
        if any(not isinstance(ty, str) for ty in signature):
            raise NotReplayable(f"kernel {compiled.name} takes tuple arguments")
        meta = compiled.metadata._asdict()
        target = meta.get("target")
        meta["target"] = {"backend": target.backend, "arch": target.arch, "warp_size": target.warp_size}
        self.kernels.append({"name": compiled.name, "signature": signature,
                             "metadata": json.dumps(meta, default=str), "cubin": bytes(compiled.asm["cubin"])})
        self._kernel_index[id(compiled)] = len(self.kernels) - 1
        self._alive.append(compiled)
        return len(self.kernels) - 1

    def _launch_arg(self, ty: str, a):
        if ty == "constexpr":
            return None
        if ty.startswith("*"):
            if a is None:
                return None
            if not isinstance(a, torch.Tensor) or a.device.type != self.device:
                raise NotReplayable(f"a pointer argument is a {type(a).__name__}, not a tensor on {self.device}")
            return self.ref(a)
        if ty.startswith("tensordesc"):
            base = getattr(a, "base", None)
            if not isinstance(base, torch.Tensor):
                raise NotReplayable("a tensor-descriptor argument without a tensor base")
            return {"desc": {"base": self.ref(base), "shape": [int(s) for s in a.shape],
                             "strides": [int(s) for s in a.strides], "block_shape": [int(s) for s in a.block_shape],
                             "padding": getattr(a, "padding", "zero")}}
        if isinstance(a, torch.Tensor):
            raise NotReplayable(f"a tensor passed as a {ty} scalar")
        if isinstance(a, (bool, int, float)):
            return a
        raise NotReplayable(f"a {ty} argument of type {type(a).__name__}")

    # result -----------------------------------------------------------------------------------
    def plan(self, outputs: list) -> dict:
        """The recorded plan with ``outputs`` as its results; raises ``NotReplayable`` when the
        forward was refused or an output is not a tensor."""
        if self.refusal:
            raise NotReplayable(self.refusal)
        refs = []
        for i, o in enumerate(outputs):
            if type(o) is not torch.Tensor:
                raise NotReplayable(f"output {i} is a {type(o).__name__}, not a tensor")
            refs.append(self.ref(o))
        if not any("launch" in s for s in self.steps):
            raise NotReplayable("the forward launched no Triton kernel")
        return {"bases": self.bases, "steps": self.steps, "outputs": refs}

    def __enter__(self):
        _ACTIVE.recorder = self
        return super().__enter__()

    def __exit__(self, *exc):
        _ACTIVE.recorder = None
        return super().__exit__(*exc)


def active() -> PlanRecorder | None:
    return getattr(_ACTIVE, "recorder", None)


_installed = False


def install_launch_hooks() -> None:
    """Wrap Triton's CUDA launcher (``CudaLauncher.__call__``), its compiled kernels' handle set-up
    (to know which kernel a launcher runs) and the autotuner's benchmarking (suspended). Idempotent;
    a no-op where Triton has no CUDA backend."""
    global _installed
    if _installed:
        return
    try:
        from triton.backends.nvidia.driver import CudaLauncher
        from triton.compiler.compiler import CompiledKernel
        from triton.runtime.autotuner import Autotuner
    except ImportError:
        return
    init_handles, call, bench = CompiledKernel._init_handles, CudaLauncher.__call__, Autotuner._bench

    def _init_handles(self):
        init_handles(self)
        if isinstance(self._run, CudaLauncher):
            self._run._hawkeye_kernel = self

    def __call__(self, gridX, gridY, gridZ, stream, function, *args):
        rec = active()
        if rec is not None:
            # args: packed metadata, launch metadata, enter and exit hooks, then the kernel's own
            rec.launch(getattr(self, "_hawkeye_kernel", None), (gridX, gridY, gridZ), args[4:])
        return call(self, gridX, gridY, gridZ, stream, function, *args)

    def _bench(self, *args, **kwargs):
        rec = active()
        if rec is not None:
            rec.suspended += 1
        try:
            return bench(self, *args, **kwargs)
        finally:
            if rec is not None:
                rec.suspended -= 1

    CompiledKernel._init_handles, CudaLauncher.__call__, Autotuner._bench = _init_handles, __call__, _bench
    _installed = True


__all__ = ["NotReplayable", "PlanRecorder", "active", "install_launch_hooks"]
