"""Import KernelBench problem files as hawkeye tasks, with inferred metadata.

A KernelBench level folder (``level1/``, ``level2/``, ...) holds ``.py`` files that each define
``class Model``, ``get_inputs()``, ``get_init_inputs()`` and module-level size constants
(``batch_size = 16``, ``input_shape = (32768,)``) read by those functions.
``import_kernelbench(path, out)`` converts every such file under ``path``, or refuses it with a
one-line reason:

- a file that loads pretrained Hugging Face weights (level 4) is refused from its text, before
  anything runs (``kernelbench.source.refusal_reason``);
- a file that does not import, lacks ``Model``/``get_inputs``/``get_init_inputs``, whose forward
  fails on the meta device, returns no tensor, or draws random numbers in ``forward`` (no
  candidate can match a draw) is refused;
- id ``kb_<level>_<file stem>`` (lower case, non-alphanumerics as ``_``), family
  ``kernelbench-<level>``; the GPU shape is the file's own constants (``kernelbench.source``),
  dtypes and sizes come from one forward on the meta device; tolerances are the defaults for
  the output dtype (integer outputs such as argmax must match exactly);
- the CPU shape scales every size constant until inputs, outputs and parameters fit the
  interpreter's budget (``kernelbench.shapes``); at it, the float64 reference must run, be
  deterministic and be finite on the file's own inputs, else the file is refused. A task with no
  CPU shape says why (``TaskSpec.no_cpu_reason``, in ``tasks show`` and the prompt).

Each task module ``<out>/<id>.py`` is the KernelBench file verbatim, so ``hawkeye tasks show``
and the prompt show the problem as KernelBench states it, followed by a generated block
(``kernelbench.task``: shapes, roofline counts, the judge's hooks of ``kernelbench.trials``).
A verbatim copy also lies in ``<out>/sources/``, and the import report in
``<out>/kernelbench_import.json``. Nothing is downloaded. Importing runs each file's code, as
KernelBench's own harness does: import only files you trust.

    hawkeye tasks import-kernelbench KernelBench/level1 --out ./kb_tasks
    HAWKEYE_TASK_DIRS=./kb_tasks hawkeye check kb_level1_19_relu cand.py
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

import platformdirs
import torch

from hawkeye_env.kernelbench.shapes import CPU_ELEMENT_BUDGET, cpu_shape
from hawkeye_env.kernelbench.source import (
    as_list,
    bind,
    forward,
    load_source,
    refusal_reason,
    size_constants,
    tensors,
)
from hawkeye_env.kernelbench.task import forward_counts, roofline_counts, shape_key
from hawkeye_env.kernelbench.trials import draw_inputs, prepare_trial, reference64
from hawkeye_env.tasks.registry import TASK_FOLDER_MARKER, register_tasks_from
from hawkeye_env.tasks.spec import DEFAULT_TOLERANCES

REPORT_FILE = "kernelbench_import.json"
INTEGER_DTYPES = ("int64", "int32", "int16", "int8", "uint8", "bool")

__all__ = ["CPU_ELEMENT_BUDGET", "ImportReport", "default_out", "import_kernelbench", "render_report",
           "task_id_for"]


@dataclass
class ImportReport:
    """What ``import_kernelbench`` did: ``imported`` task summaries and ``skipped`` files with reasons."""

    out: str
    imported: list[dict] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


class Refused(ValueError):
    """A file that cannot become a task; the message is the one-line reason."""


def task_id_for(path: Path) -> str:
    stem = re.sub(r"[^0-9a-z]+", "_", f"{path.parent.name}_{path.stem}".lower()).strip("_")
    return f"kb_{stem}"


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:200] if text else ''}"


def _normal_draw(template: torch.Tensor, distribution: str, generator: torch.Generator) -> torch.Tensor:
    return torch.randn(template.shape, generator=generator, device=generator.device).to(template.dtype)


def check_on_cpu(module, shape: dict, functions: tuple) -> str | None:
    """Why the task cannot be judged at its CPU ``shape``, or None: the float64 reference must
    run, two forwards on the same inputs must agree, and the reference must be finite on the
    file's own inputs (normal draws, seed 0)."""
    bind(module, shape)
    torch.manual_seed(0)
    model = module.Model(*functions[1]())
    prepare_trial(model, "normal", torch.Generator().manual_seed(1), _normal_draw)
    inputs = draw_inputs(module, functions[0], shape, "normal", 0, "cpu", _normal_draw)
    try:
        with torch.no_grad():
            first, second = as_list(model(*inputs)), as_list(model(*inputs))
            ref = reference64(model, *inputs)
    except Exception as exc:  # noqa: BLE001 - the file's own code failing is the reason to report
        return f"the reference fails at the CPU shape: {_first_line(exc)}"
    if any(not torch.equal(a, b) for a, b in zip(tensors(first), tensors(second))):
        return "two forwards on the same inputs differ: the reference is not deterministic"
    if any(not bool(torch.isfinite(r).all()) for r in tensors(ref) if r.is_floating_point()):
        return "the float64 reference is not finite on the file's own inputs"
    return None


def _first_forward(module, gpu: dict) -> tuple[dict, str]:
    """The forward at the GPU shape and the device the file's forwards run on: ``meta`` (no
    memory), or ``cpu`` when an op has no meta kernel (``Tensor.item()`` in a Swin block)."""
    try:
        return forward(module, gpu), "meta"
    except Exception as exc:  # noqa: BLE001 - the file's own code failing is the reason to report
        meta_error = _first_line(exc)
    try:
        return forward(module, gpu, "cpu"), "cpu"
    except Exception as exc:  # noqa: BLE001
        raise Refused(f"Model forward raised {meta_error} on the meta device and {_first_line(exc)} on "
                      "the CPU") from None


def _tolerance_names(out_dtypes: list[str]) -> list[str]:
    bad = [d for d in out_dtypes if d not in DEFAULT_TOLERANCES and d not in INTEGER_DTYPES]
    if bad:
        raise Refused(f"no tolerance for output dtype {', '.join(bad)}")
    return [d for d in out_dtypes if d in INTEGER_DTYPES]


def _describe(path: Path, task_id: str, inputs: list, out_dtypes: list[str], no_cpu_reason: str) -> str:
    signature = ", ".join(f"{_dtype_name(t.dtype)}{list(t.shape)}" for t in tensors(inputs))
    text = (
        f"KernelBench {path.parent.name} problem {path.stem}: write ModelNew whose forward matches "
        f"Model.forward of the KernelBench file above (verbatim; also sources/{task_id}.py) using Triton "
        f"kernels. Inputs at the timed shape: {signature}; outputs: {', '.join(out_dtypes)}. Each trial "
        "draws inputs from the file's own get_inputs (its torch.randn from the trial's distribution), so "
        "their structure holds; weights are the layers' own initialisation drawn per trial, constant "
        "ones jittered; dropout layers run in eval mode, other layers as KernelBench runs them."
    )
    if no_cpu_reason:
        text += f" No CPU shape ({no_cpu_reason}): judge it with --device cuda."
    return text


TRAILER = '''

# ---- hawkeye-env task {id}, generated by `hawkeye tasks import-kernelbench` from {origin} ----
# Everything above is the KernelBench file verbatim (a copy lies in sources/{id}.py). Re-run the
# import rather than editing this block.
import sys as _sys

from hawkeye_env.kernelbench.task import KernelBenchTask as _KernelBenchTask
from hawkeye_env.kernelbench.task import tolerances_for as _tolerances_for
from hawkeye_env.tasks.spec import TaskSpec as _TaskSpec

_TASK = _KernelBenchTask(_sys.modules[__name__], {gpu!r}, {counts!r})
get_inputs = _TASK.get_inputs
get_init_inputs = _TASK.get_init_inputs
draw_inputs = _TASK.draw_inputs

SPEC = _TaskSpec(
    id={id!r},
    family={family!r},
    description={description!r},
    module=__name__,
    dtypes={dtypes!r},
    cpu_shapes={cpu!r},
    gpu_shapes=({gpu!r},),
    flops=_TASK.flops,
    bytes_moved=_TASK.bytes_moved,
    tags=("kernelbench",),
    tolerances=_tolerances_for({exact!r}),
    no_cpu_reason={no_cpu!r},
)
'''


def _convert(path: Path, out: Path) -> dict:
    """Write the task module of one file; returns its summary or raises ``Refused``."""
    text = path.read_text(encoding="utf-8")
    reason = refusal_reason(text)
    if reason:
        raise Refused(reason)
    task_id = task_id_for(path)
    probe = f"hawkeye_kernelbench_probe_{task_id}"
    try:
        module = load_source(path, probe)
    except Exception as exc:  # noqa: BLE001 - any failure of the file's code is a reason to report
        raise Refused(f"importing the file raised {_first_line(exc)}") from None
    try:
        missing = [n for n in ("Model", "get_inputs", "get_init_inputs") if not callable(getattr(module, n, None))]
        if missing:
            raise Refused(f"the file defines no {', '.join(missing)}")
        functions = (module.get_inputs, module.get_init_inputs)
        gpu = size_constants(module)
        f, device = _first_forward(module, gpu)
        if f["random"]:
            raise Refused(f"Model.forward draws random numbers ({', '.join(f['random'])}): its output is a "
                          "draw, not a function of its inputs, so no candidate can match it")
        out_dtypes = list(dict.fromkeys(_dtype_name(t.dtype) for t in tensors(f["outputs"])))
        if not out_dtypes:
            raise Refused("Model.forward returns no tensor")
        exact = _tolerance_names(out_dtypes)
        search = cpu_shape(module, gpu, device=device) if gpu else None
        cpu, no_cpu = (search.shape, search.reason) if search else (None, "the file has no size constants")
        if cpu is not None:
            failure = check_on_cpu(module, cpu, functions)
            if failure:
                raise Refused(failure)
        counts = {shape_key(gpu): list(forward_counts(f))}
        if cpu:
            counts[shape_key(cpu)] = list(roofline_counts(module, cpu, functions, device))
        in_dtypes = [_dtype_name(t.dtype) for t in tensors(f["inputs"])]
        dtypes = tuple(dict.fromkeys(out_dtypes + in_dtypes))
        description = _describe(path, task_id, f["inputs"], out_dtypes, no_cpu)
    finally:
        sys.modules.pop(probe, None)
    (out / "sources").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(path, out / "sources" / f"{task_id}.py")
    (out / f"{task_id}.py").write_text(text.rstrip("\n") + "\n" + TRAILER.format(
        id=task_id, origin=f"{path.parent.name}/{path.name}", family=f"kernelbench-{path.parent.name}",
        description=description, dtypes=dtypes, cpu=(cpu,) if cpu else (), gpu=gpu, counts=counts,
        exact=tuple(exact), no_cpu=no_cpu,
    ), encoding="utf-8")
    return {"id": task_id, "source": str(path), "level": path.parent.name, "problem": path.name,
            "dtypes": list(dtypes), "gpu_shape": gpu, "cpu_shape": cpu, "gpu_only": cpu is None,
            "no_cpu_reason": no_cpu}


def default_out() -> Path:
    return Path(platformdirs.user_data_dir("hawkeye-env")) / "kernelbench"


def import_kernelbench(path: str | Path, out: str | Path | None = None, register: bool = True) -> ImportReport:
    """Convert every KernelBench ``.py`` file under ``path`` (a file or a folder, searched
    recursively) into a task module in ``out`` (default: the user data dir); files that cannot be
    converted are reported with the reason. With ``register`` the tasks are registered for this
    process and its children. The report is also written to ``<out>/kernelbench_import.json``."""
    src, out = Path(path).resolve(), Path(out).resolve() if out else default_out()
    out.mkdir(parents=True, exist_ok=True)
    (out / TASK_FOLDER_MARKER).write_text("hawkeye task folder (see hawkeye_env/tasks/registry.py)\n")
    report = ImportReport(out=str(out))
    files = [src] if src.is_file() else sorted(p for p in src.rglob("*.py") if not p.name.startswith("_"))
    for f in files:
        try:
            report.imported.append(_convert(f, out))
        except Refused as exc:
            report.skipped.append({"file": str(f), "level": f.parent.name, "problem": f.name, "reason": str(exc)})
    (out / REPORT_FILE).write_text(json.dumps(report.to_dict(), indent=1, sort_keys=True) + "\n")
    if register and report.imported:
        register_tasks_from(out)
    return report


def render_report(report: ImportReport) -> str:
    lines = [f"{len(report.imported)} imported into {report.out}, {len(report.skipped)} skipped"]
    for t in report.imported:
        where = f"GPU only: {t['no_cpu_reason']}" if t["gpu_only"] else f"cpu {json.dumps(t['cpu_shape'])}"
        lines.append(f"  + {t['id']}  [{', '.join(t['dtypes'])}]  {where}")
    for s in report.skipped:
        lines.append(f"  - {Path(s['file']).name}: {s['reason']}")
    return "\n".join(lines)
