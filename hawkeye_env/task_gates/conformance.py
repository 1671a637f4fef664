"""Gate: the task passes the conformance checks of the curated tasks (``tests/tasks/
test_conformance.py``, ``test_task_validity.py``).

* the spec names its own module, and has a description, dtypes and tags, every tag a unit tag;
* every public shape has exactly ``get_inputs``' keys; both ``get_inputs`` and ``get_init_inputs``
  default to the first GPU shape;
* FLOP and byte counts are positive at every public shape;
* the CPU shapes build (``Model`` and inputs) and the first runs a forward; the GPU shape and one
  hidden GPU shape build and run a forward on the meta device (no memory), so the timed shapes and
  the shape family are well formed (a loop over time is built there, not run: its meta forward at
  the GPU shape takes seconds).

Reason codes: ``conformance``, ``meta_forward``.
"""

from __future__ import annotations

import inspect
from types import ModuleType

import torch

from hawkeye_env.task_gates.failure import GateFailure
from hawkeye_env.task_gates.trials import hidden_shapes
from hawkeye_env.tasks.generate.graph import Trace
from hawkeye_env.tasks.generate.splits import trace_module
from units.lib.index import list_units

CODES = ("conformance", "meta_forward")


def _unit_tags() -> set[str]:
    return {tag for unit in list_units() for tag in unit.tags}


def _check_spec(module: ModuleType) -> None:
    spec = module.SPEC
    if spec.module != module.__name__:
        raise GateFailure("conformance", f"SPEC.module {spec.module!r} is not the module {module.__name__!r}")
    if not (spec.description and spec.dtypes and spec.tags):
        raise GateFailure("conformance", "description, dtypes and tags must not be empty")
    unknown = set(spec.tags) - _unit_tags()
    if unknown:
        raise GateFailure("conformance", f"tags {sorted(unknown)} name no unit")
    first = dict(spec.gpu_shapes[0])
    for fn in (module.get_inputs, module.get_init_inputs):
        defaults = {name: p.default for name, p in inspect.signature(fn).parameters.items()}
        if defaults != first:
            raise GateFailure("conformance", f"{fn.__name__} defaults {defaults} are not the first GPU shape {first}")
    for shape in (*spec.cpu_shapes, *spec.gpu_shapes):
        if set(shape) != set(first):
            raise GateFailure("conformance", f"shape {dict(shape)} has other keys than {sorted(first)}")
        if not (spec.flops(**shape) > 0 and spec.bytes_moved(**shape) > 0):
            raise GateFailure("conformance", f"FLOPs and bytes must be positive at {dict(shape)}")


def _build_meta(module: ModuleType, shape: dict, forward: bool) -> Trace | None:
    """Build ``Model`` and the inputs at ``shape`` on the meta device; with ``forward``, trace one
    forward there too."""
    try:
        if forward:
            return trace_module(module, shape, "meta")
        with torch.device("meta"):
            module.Model(*module.get_init_inputs(**shape))
            module.get_inputs(**shape)
        return None
    except Exception as exc:  # noqa: BLE001 - any failure of the task's own code drops it
        raise GateFailure("meta_forward", f"{dict(shape)}: {type(exc).__name__}: {exc}"[:300]) from exc


def conformance(module: ModuleType, seed: int) -> tuple[Trace, Trace | None]:
    """Raise ``GateFailure`` at the first check the task fails (module docstring). Returns the traces
    of one forward at the first CPU shape (on the CPU) and at the GPU shape (on the meta device; None
    for a loop, whose op count differs between the CPU shapes: there the GPU shapes are built, not run)."""
    _check_spec(module)
    spec = module.SPEC
    for shape in spec.cpu_shapes:
        try:
            module.Model(*module.get_init_inputs(**shape))
            module.get_inputs(**shape)
        except Exception as exc:  # noqa: BLE001
            raise GateFailure("conformance", f"CPU shape {dict(shape)} does not build: {exc}"[:300]) from exc
    traces = []
    for shape in spec.cpu_shapes[:2]:
        try:
            traces.append(trace_module(module, dict(shape), "cpu"))
        except Exception as exc:  # noqa: BLE001
            raise GateFailure("reference_error", f"{dict(shape)}: {type(exc).__name__}: {exc}"[:300]) from exc
    cpu = traces[0]
    run = len({len(t.nodes) for t in traces}) == 1  # a loop over a dim runs as many ops as the dim is long
    gpu = _build_meta(module, dict(spec.gpu_shapes[0]), run)
    for shape in hidden_shapes(spec, "cuda", seed, count=1):
        _build_meta(module, shape, run)
    return cpu, gpu
