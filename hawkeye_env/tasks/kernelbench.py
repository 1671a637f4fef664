"""Import KernelBench problem files as hawkeye tasks, with inferred metadata.

A KernelBench level folder (``level1/``, ``level2/``, ...) holds ``.py`` files that each define
``class Model``, ``get_inputs()``, ``get_init_inputs()`` and module-level integer size constants
(``batch_size = 16``, ``dim = 16384``) read by those functions. ``import_kernelbench(path, out)``
converts every such file under ``path``:

- id ``kb_<level>_<file stem>`` (lower case, non-alphanumerics as ``_``), family ``kernelbench-<level>``
  (the file's folder name);
- the GPU shape is the file's own constants; shape keys are the constants' names, so
  ``get_inputs(**shape)`` rebinds them before calling the file's functions;
- dtypes, input and output sizes come from one forward on ``torch.device("meta")`` (no memory);
  the tolerance is the default for the output dtype;
- the CPU shape divides every constant above ``KEEP_BELOW`` by the smallest power of two that
  brings inputs plus outputs under ``CPU_ELEMENT_BUDGET`` elements (odd sizes first, to exercise
  masking), checked by a meta forward; a file without constants, or one whose small shape does
  not run, is GPU-only (no CPU shapes, so ``device="cpu"`` cannot judge it);
- roofline floors are lower bounds, never estimates of the real cost (a floor above the true
  minimum would reject honest kernels as ``impossible_time``): bytes = inputs + outputs +
  parameters, each moved once; FLOPs = one per output element.

Each task is a small wrapper module ``<out>/<id>.py`` plus a verbatim copy of the file in
``<out>/sources/``; ``<out>`` is marked as a task folder and registered with
``registry.register_tasks_from``. Nothing is downloaded. Importing a file runs its code, as
KernelBench's own harness does: import only files you trust.

    hawkeye tasks import-kernelbench KernelBench/level1 --out ./kb_tasks
    HAWKEYE_TASK_DIRS=./kb_tasks hawkeye check kb_level1_19_relu cand.py
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import sys
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from types import ModuleType

import platformdirs
import torch

from hawkeye_env.tasks.registry import TASK_FOLDER_MARKER, register_tasks_from
from hawkeye_env.tasks.spec import DEFAULT_TOLERANCES

# Interpreter budget: elementwise and reduction kernels over 16k elements judge in about a second
# per trial under the Triton CPU interpreter; a 64^3 matmul (12k elements) in about two.
CPU_ELEMENT_BUDGET = 16384
# Constants at or below this are kernel sizes, strides, head counts or small dims: kept as is.
KEEP_BELOW = 16
MAX_SCALE_DOUBLINGS = 20


@dataclass
class ImportReport:
    """What ``import_kernelbench`` did: ``imported`` task summaries and ``skipped`` files with reasons."""

    out: str
    imported: list[dict] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def load_source(path: str | Path, name: str) -> ModuleType:
    """Execute the KernelBench file at ``path`` as module ``name`` (kept in ``sys.modules``)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def size_constants(module: ModuleType) -> dict[str, int]:
    """The module's public integer globals (bools excluded), the shape keys of its task."""
    return {
        k: v for k, v in vars(module).items()
        if not k.startswith("_") and type(v) is int
    }


def _bind(module: ModuleType, shape: dict) -> ModuleType:
    for k, v in shape.items():
        setattr(module, k, int(v))
    return module


def _forward(module: ModuleType, shape: dict, device: str = "meta"):
    """``(inputs, outputs, parameters)`` of one forward of the file's ``Model`` at ``shape``."""
    _bind(module, shape)
    with torch.device(device):
        init = module.get_init_inputs()
        inputs = module.get_inputs()
        model = module.Model(*init)
        with torch.no_grad():
            out = model(*inputs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    return inputs, outs, list(model.parameters()) + list(model.buffers())


def _tensors(xs) -> list[torch.Tensor]:
    return [x for x in xs if isinstance(x, torch.Tensor)]


def roofline_counts(module: ModuleType, shape: dict) -> tuple[float, float]:
    """``(flops, bytes)`` lower bounds at ``shape`` (module docstring: why lower bounds)."""
    inputs, outs, params = _forward(module, shape)
    moved = sum(t.numel() * t.element_size() for t in _tensors(inputs) + _tensors(outs) + params)
    return float(sum(t.numel() for t in _tensors(outs))), float(moved)


def _cpu_shape(module: ModuleType, gpu: dict) -> dict | None:
    """The smallest scaling of ``gpu`` (see the module docstring) that fits the budget and runs."""
    for doublings in range(MAX_SCALE_DOUBLINGS + 1):
        for odd in (True, False):
            shape = {
                k: v if v <= KEEP_BELOW else max(KEEP_BELOW // 2, v >> doublings) | int(odd)
                for k, v in gpu.items()
            }
            try:
                inputs, outs, _ = _forward(module, shape)
            except Exception:  # noqa: BLE001 - a scaled shape the file's structure rejects
                continue
            if sum(t.numel() for t in _tensors(inputs) + _tensors(outs)) <= CPU_ELEMENT_BUDGET:
                return shape
            break  # fits no better at this scale whether odd or even: halve again
    return None


class KernelBenchTask:
    """The task interface of one converted file, used by its generated wrapper module."""

    def __init__(self, source: str | Path, name: str, gpu_shape: dict):
        self.module = load_source(source, name)
        self.gpu_shape = dict(gpu_shape)
        self.Model = self.module.Model

    def get_inputs(self, **shape):
        return _bind(self.module, {**self.gpu_shape, **shape}).get_inputs()

    def get_init_inputs(self, **shape):
        return _bind(self.module, {**self.gpu_shape, **shape}).get_init_inputs()

    @cache  # noqa: B019 - one instance per task module, alive for the process
    def _counts(self, key: tuple) -> tuple[float, float]:
        return roofline_counts(self.module, {**self.gpu_shape, **dict(key)})

    def flops(self, **shape) -> float:
        return self._counts(tuple(sorted(shape.items())))[0]

    def bytes_moved(self, **shape) -> float:
        return self._counts(tuple(sorted(shape.items())))[1]


WRAPPER = '''"""KernelBench task {id} from {origin}.

Generated by ``hawkeye tasks import-kernelbench``; re-run it rather than editing this file.
"""

from pathlib import Path

from hawkeye_env.tasks.kernelbench import KernelBenchTask
from hawkeye_env.tasks.spec import TaskSpec

_TASK = KernelBenchTask(Path(__file__).with_name("sources") / "{id}.py", "{id}__source", {gpu!r})
Model = _TASK.Model
get_inputs = _TASK.get_inputs
get_init_inputs = _TASK.get_init_inputs

SPEC = TaskSpec(
    id="{id}",
    family="{family}",
    description={description!r},
    module=__name__,
    dtypes={dtypes!r},
    cpu_shapes={cpu!r},
    gpu_shapes=({gpu!r},),
    flops=_TASK.flops,
    bytes_moved=_TASK.bytes_moved,
    tags=("kernelbench",),
)
'''


def task_id_for(path: Path) -> str:
    stem = re.sub(r"[^0-9a-z]+", "_", f"{path.parent.name}_{path.stem}".lower()).strip("_")
    return f"kb_{stem}"


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _convert(path: Path, out: Path) -> dict:
    """Write the wrapper of one file; returns its summary or raises ``ValueError`` with the reason."""
    task_id = task_id_for(path)
    try:
        module = load_source(path, f"hawkeye_kernelbench_probe_{task_id}")
    except Exception as exc:  # noqa: BLE001 - any failure of user code is a reason to report
        raise ValueError(f"importing the file raised {type(exc).__name__}: {exc}") from None
    try:
        missing = [n for n in ("Model", "get_inputs", "get_init_inputs") if not callable(getattr(module, n, None))]
        if missing:
            raise ValueError(f"the file defines no {', '.join(missing)}")
        gpu = size_constants(module)
        try:
            inputs, outs, _ = _forward(module, gpu)
        except Exception as exc:  # noqa: BLE001
            raise ValueError(f"Model forward on the meta device raised {type(exc).__name__}: {exc}") from None
        out_dtypes = sorted({_dtype_name(t.dtype) for t in _tensors(outs)})
        if not out_dtypes:
            raise ValueError("Model.forward returns no tensor")
        no_tol = [d for d in out_dtypes if d not in DEFAULT_TOLERANCES]
        if no_tol:
            raise ValueError(f"no default tolerance for output dtype {', '.join(no_tol)}")
        cpu = _cpu_shape(module, gpu) if gpu else None
        in_dtypes = [_dtype_name(t.dtype) for t in _tensors(inputs)]
        dtypes = tuple(dict.fromkeys(out_dtypes + in_dtypes))
        signature = ", ".join(f"{_dtype_name(t.dtype)}{list(t.shape)}" for t in _tensors(inputs))
        description = (
            f"KernelBench {path.parent.name} problem {path.stem}: write ModelNew whose forward matches "
            f"Model.forward of the original file (sources/{task_id}.py) using Triton kernels. Inputs "
            f"at the timed shape: {signature}; outputs: {', '.join(out_dtypes)}."
        )
    finally:
        sys.modules.pop(f"hawkeye_kernelbench_probe_{task_id}", None)
    (out / "sources").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(path, out / "sources" / f"{task_id}.py")
    (out / f"{task_id}.py").write_text(WRAPPER.format(
        id=task_id, origin=path.name, family=f"kernelbench-{path.parent.name}", description=description,
        dtypes=dtypes, cpu=(cpu,) if cpu else (), gpu=gpu,
    ), encoding="utf-8")
    return {"id": task_id, "source": str(path), "dtypes": list(dtypes), "gpu_shape": gpu,
            "cpu_shape": cpu, "gpu_only": cpu is None}


def default_out() -> Path:
    return Path(platformdirs.user_data_dir("hawkeye-env")) / "kernelbench"


def import_kernelbench(path: str | Path, out: str | Path | None = None, register: bool = True) -> ImportReport:
    """Convert every KernelBench ``.py`` file under ``path`` (a file or a folder, searched
    recursively) into a task module in ``out`` (default: the user data dir); files that cannot be
    converted are reported with the reason. With ``register`` the tasks are registered for this
    process and its children."""
    src, out = Path(path).resolve(), Path(out).resolve() if out else default_out()
    out.mkdir(parents=True, exist_ok=True)
    (out / TASK_FOLDER_MARKER).write_text("hawkeye task folder (see hawkeye_env/tasks/registry.py)\n")
    report = ImportReport(out=str(out))
    files = [src] if src.is_file() else sorted(p for p in src.rglob("*.py") if not p.name.startswith("_"))
    for f in files:
        try:
            report.imported.append(_convert(f, out))
        except ValueError as exc:
            report.skipped.append({"file": str(f), "reason": str(exc)})
    if register and report.imported:
        register_tasks_from(out)
    return report


def render_report(report: ImportReport) -> str:
    lines = [f"{len(report.imported)} imported into {report.out}, {len(report.skipped)} skipped"]
    for t in report.imported:
        where = "GPU only" if t["gpu_only"] else f"cpu {json.dumps(t['cpu_shape'])}"
        lines.append(f"  + {t['id']}  [{', '.join(t['dtypes'])}]  {where}")
    for s in report.skipped:
        lines.append(f"  - {Path(s['file']).name}: {s['reason']}")
    return "\n".join(lines)
