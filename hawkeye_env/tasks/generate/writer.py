"""A ``TaskDraft`` written out as a task module: one folder per task holding ``task.py``.

The module has the layout of a curated task's ``task.py`` (``hawkeye_env/tasks/gemm_bf16/task.py``): a
docstring, ``Model`` whose ``forward`` is the reference in plain PyTorch, ``get_inputs(**shape)`` and
``get_init_inputs(**shape)`` whose defaults are the GPU shape, and ``SPEC``. Low-precision tasks do
their arithmetic in float32 and round the output once (``upcast``/``downcast``), as the curated
norms do, so the judge's float64 evaluation (``Model.double()``) stays exact.

    >>> from hawkeye_env.tasks.generate.families import draw_draft
    >>> import random
    >>> source = render(draw_draft(random.Random(1)), "g1_00000_x", "g1_00000_x.task", "")
    >>> compile(source, "task.py", "exec") and "SPEC = TaskSpec(" in source
    True
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from hawkeye_env.tasks.generate.counts import bytes_expr
from hawkeye_env.tasks.generate.draft import Param, TaskDraft, TensorArg
from hawkeye_env.tasks.task_dirs import TASK_FILE

HELPERS = {
    "upcast": '''def upcast(t: torch.Tensor) -> torch.Tensor:
    """float32 arithmetic, or float64 when the judge evaluates the reference exactly."""
    return t if t.dtype == torch.float64 else t.float()
''',
    "downcast": '''def downcast(t: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """The output rounded to ``dtype`` once, except in the judge's float64 evaluation."""
    return t if t.dtype == torch.float64 else t.to(dtype)
''',
}


def _signature(draft: TaskDraft) -> str:
    return ", ".join(f"{k}: int = {v}" for k, v in draft.gpu_shape.items())


def _shape(shape: tuple[str, ...]) -> str:
    return ", ".join(shape)


def _input_expr(t: TensorArg) -> str:
    if t.kind == "index":
        return f"torch.randint(0, {t.high}, ({_shape(t.shape)},))"
    if t.kind == "mask":
        return t.name
    if t.dtype.startswith("float8"):
        return f"torch.randn({_shape(t.shape)}).to(torch.{t.dtype})"
    return f"torch.randn({_shape(t.shape)}, dtype=torch.{t.dtype})"


def _get_inputs(draft: TaskDraft) -> list[str]:
    lines = [f"def get_inputs({_signature(draft)}):"]
    for t in draft.inputs:
        if t.kind == "mask":  # kept with probability ``keep``; column 0 always, so no row is empty
            lines += [f"    {t.name} = torch.rand({_shape(t.shape)}) < {t.keep}", f"    {t.name}[..., 0] = True"]
    items = [_input_expr(t) for t in draft.inputs]
    if len(", ".join(items)) > 80:
        lines += ["    return ["] + [f"        {item}," for item in items] + ["    ]"]
    else:
        lines.append(f"    return [{', '.join(items)}]")
    keys = ", ".join(draft.init_keys)
    return lines + ["", "", f"def get_init_inputs({_signature(draft)}):", f"    return [{keys}]"]


def _model(draft: TaskDraft) -> list[str]:
    init_args = "".join(f", {k}: int" for k in draft.init_keys)
    lines = ["class Model(nn.Module):", f"    def __init__(self{init_args}):", "        super().__init__()"]
    for p in draft.params:
        lines.append(f"        self.{p.name} = nn.Parameter(torch.randn({_shape(p.shape)}, dtype=torch.{p.dtype}))")
    lines += [f"        {line}" for line in draft.init_lines]
    args = "".join(f", {t.name}: torch.Tensor" for t in draft.inputs)
    out = "tuple[torch.Tensor, ...]" if draft.backward else "torch.Tensor"
    lines += ["", f"    def forward(self{args}) -> {out}:"]
    return lines + [f"        {line}" if line else "" for line in draft.body]


def _tensor_words(t: TensorArg | Param) -> str:
    kind = getattr(t, "kind", "float")
    what = f"int64 ids in [0, {t.high})" if kind == "index" else "bool (True: kept)" if kind == "mask" else t.dtype
    return f"{t.name} {what} [{_shape(t.shape)}]"


def describe(draft: TaskDraft) -> str:
    """The paragraph an agent reads: what to return, the inputs, parameters and output, the hint."""
    parts = [draft.summary.rstrip(".") + "."]
    parts.append("Inputs: " + "; ".join(_tensor_words(t) for t in draft.inputs) + ".")
    if draft.params:
        ctor = f"Model({', '.join(draft.init_keys)})"
        parts.append(f"Parameters (constructor {ctor}): " + "; ".join(_tensor_words(p) for p in draft.params) + ".")
    if draft.backward:
        parts.append("Return the gradients as a tuple, each in its tensor's dtype.")
    else:
        parts.append(f"Output: {draft.out_dtype} [{_shape(draft.out_shape)}].")
    if draft.dtype in ("bfloat16", "float16") and "upcast" in draft.helpers:
        parts.append("Do the arithmetic in float32 and round the result once.")
    parts.append("Every size is arbitrary (not a power of two, not a multiple of a block).")
    if draft.hint:
        parts.append(draft.hint.rstrip(".") + ".")
    return " ".join(parts)


def _lines(text: str, width: int = 100, indent: str = "        ") -> list[str]:
    """``text`` as implicitly concatenated string literals of at most ``width`` columns."""
    words, lines, current = text.split(" "), [], ""
    for w in words:
        if current and len(indent) + len(current) + len(w) + 4 > width:
            lines.append(current)
            current = ""
        current += w + " "
    lines.append(current.rstrip())
    return [f"{indent}{line!r}" for line in lines]


def _spec(draft: TaskDraft, task_id: str, module: str) -> list[str]:
    keys = ", ".join(draft.gpu_shape)
    dtypes = tuple(dict.fromkeys([*(t.dtype for t in draft.inputs if t.kind == "float"), draft.out_dtype]))
    lines = ["SPEC = TaskSpec(", f"    id={task_id!r},", f"    family={draft.family!r},", "    description=("]
    lines += _lines(describe(draft)) + ["    ),", f"    module={module!r},", f"    dtypes={dtypes!r},"]
    lines += [f"    cpu_shapes={tuple(draft.cpu_shapes)!r},", f"    gpu_shapes=({draft.gpu_shape!r},),",
              f"    flops=lambda {keys}, **_: {draft.flops},",
              f"    bytes_moved=lambda {keys}, **_: {bytes_expr(draft)},",
              f"    tags={tuple(draft.tags)!r},"]
    if draft.tolerance:
        lines.append(f"    tolerances={{**DEFAULT_TOLERANCES, {draft.out_dtype!r}: {draft.tolerance}}},")
    optional = {"layouts": (draft.layouts, ()),
                "value_distributions": (draft.value_distributions, ("zeros", "repeated")),
                "large_magnitude": (draft.large_magnitude, 0.0), "answer_is_copy": (draft.answer_is_copy, False)}
    for name, (value, default) in optional.items():
        if value != default:
            lines.append(f"    {name}={value!r},")
    if tuple(draft.distributions) != ("normal", "uniform", "heavy_tailed"):
        lines.append(f"    distributions={tuple(draft.distributions)!r},")
    return lines + [")"]


def render(draft: TaskDraft, task_id: str, module: str, provenance: str) -> str:
    """The task module's source. ``provenance``: one line on where it came from (generator, seed)."""
    summary = textwrap.fill(f'"""{draft.summary.rstrip(".")}.', width=100, break_on_hyphens=False)
    doc = [summary] + (["", provenance] if provenance else []) + ['"""']
    text = "\n".join(draft.body) + "".join(HELPERS[h] for h in draft.helpers)
    imports = ["from __future__ import annotations", "", "import torch"]
    if "F." in text:
        imports.append("import torch.nn.functional as F")
    imports += ["from torch import nn", ""]
    names = ["TaskSpec"] + (["DEFAULT_TOLERANCES", draft.tolerance] if draft.tolerance else [])
    imports.append(f"from hawkeye_env.tasks.spec import {', '.join(sorted(names))}")
    sections = ["\n".join(doc) + "\n\n" + "\n".join(imports)]
    if draft.constants:
        sections.append("\n".join(f"{k} = {v!r}" for k, v in draft.constants.items()))
    sections += [HELPERS[h].rstrip() for h in draft.helpers]
    sections += ["\n".join(_model(draft)), "\n".join(_get_inputs(draft)), "\n".join(_spec(draft, task_id, module))]
    return "\n\n\n".join(sections) + "\n"


def write_task(folder: Path, draft: TaskDraft, task_id: str, provenance: str) -> Path:
    """Write ``folder/<task_id>/task.py`` (and an empty ``__init__.py``, so the folder is a package
    importable as ``<task_id>.task`` once ``folder`` is on ``sys.path``); returns the task's folder."""
    package = folder / task_id
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / TASK_FILE).write_text(render(draft, task_id, f"{task_id}.task", provenance), encoding="utf-8")
    return package
