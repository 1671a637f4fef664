"""Gate: the judge's baselines run on the task: eager PyTorch always, ``torch.compile`` as asked.

Eager is the reference's own forward, which the ``reference`` gate already ran on every trial;
here it runs once more beside the compiled model at the first CPU shape. ``torch.compile`` costs
2-6 s per task with Inductor on CPU (its C++ code generation; a 2-core host, 2026-12) and 0.2-1.7 s
with ``aot_eager`` (Dynamo's capture and AOTAutograd, no code generation), so the generator takes
a mode (``COMPILE_MODES``): ``none``, ``capture`` (``aot_eager``: the graph can be captured) or
``inductor`` (the compiled code runs and matches eager within the task's tolerance).

Reason codes: ``compile_error``, ``compile_mismatch``.
"""

from __future__ import annotations

import torch

from hawkeye_env.task_gates.failure import GateFailure
from hawkeye_env.task_gates.trials import compare, dtype_name
from hawkeye_env.tasks.registry import task_module
from hawkeye_env.tasks.spec import TaskSpec

CODES = ("compile_error", "compile_mismatch")
COMPILE_MODES = {"none": None, "capture": "aot_eager", "inductor": "inductor"}


def baselines(spec: TaskSpec, mode: str) -> None:
    """Run eager and, unless ``mode`` is ``none``, the compiled model at the first CPU shape."""
    backend = COMPILE_MODES[mode]
    if backend is None:
        return
    module, shape = task_module(spec), dict(spec.cpu_shapes[0])
    torch.manual_seed(0)
    model = module.Model(*module.get_init_inputs(**shape))
    inputs = module.get_inputs(**shape)
    torch._dynamo.reset()
    try:
        with torch.no_grad():
            eager = model(*inputs)
            compiled = torch.compile(model, backend=backend, dynamic=False)(*inputs)
    except Exception as exc:  # noqa: BLE001 - whatever fails to compile drops the task
        raise GateFailure("compile_error", f"{backend}: {type(exc).__name__}: {exc}"[:300]) from exc
    finally:
        torch._dynamo.reset()
    eager_list = list(eager) if isinstance(eager, (tuple, list)) else [eager]
    compiled_list = list(compiled) if isinstance(compiled, (tuple, list)) else [compiled]
    for i, (e, c) in enumerate(zip(eager_list, compiled_list)):
        got = compare(c, e.double(), e.dtype, spec.tolerance(dtype_name(e.dtype)), native=e)
        if not got["ok"]:
            raise GateFailure("compile_mismatch", f"{backend} output {i}: {got['reason']}"[:300])
