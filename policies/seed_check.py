"""Whether a composed search seed computes its task (``search.task_seeds``).

A unit's solution can take exactly the arguments a task's ``forward`` has and still compute
something else: ``units/row_reduction``'s ``rms_norm(x, weight, eps)`` fits ``layernorm_bf16``, and
a search that composed it spent its layernorm samples on that seed's mutations, all wrong. The
check runs the seed's ``ModelNew`` with the unit function bound to the unit's plain-PyTorch
reference (no kernel runs, so it takes milliseconds on any machine) at the task's first CPU shape,
on the reference model and inputs the judge builds for a trial (``references.build``), and compares
it with the task's float64 reference under the judge's own tolerance (``checks.first_failure``),
all through the judge's public functions. Only trusted sources execute here: the ``__init__`` of the
task's expert (or, for a task without one, of its reference ``Model``) and the unit's reference;
candidates never do.
"""

from __future__ import annotations

import importlib.util
import logging
import sys
import tempfile
from pathlib import Path

import torch

log = logging.getLogger(__name__)


def _load(task_id: str, source: str):
    """Import ``source`` as a module from a temporary file (Triton's ``@jit`` reads its function
    sources from files, dataclasses look their module up in ``sys.modules``)."""
    name = f"hawkeye_seed_probe_{task_id}"
    with tempfile.TemporaryDirectory(prefix="hawkeye-seed-") as folder:
        path = Path(folder) / f"{name}.py"
        path.write_text(source, encoding="utf-8")
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        finally:
            sys.modules.pop(name, None)
    return module


def computes_task(spec, seed: str, fn_name: str, unit_reference: str) -> bool:
    """True when ``seed`` (a module defining ``ModelNew`` whose forward calls ``fn_name``), with
    ``fn_name`` replaced by ``unit_reference`` (``"module:function"``), matches ``spec``'s reference
    at its first CPU shape with ``normal`` inputs. Outputs are cast to the reference's dtypes first:
    a unit reference may compute in a wider type than its kernel returns."""
    from hawkeye_env.judge.parent.decide.checks import first_failure
    from hawkeye_env.judge.parent.decide.correctness import dtype_name
    from hawkeye_env.judge.parent.decide.references import as_list, build, reference64
    from hawkeye_env.tasks.registry import task_module
    from units.lib.index import resolve

    try:
        module = _load(spec.id, seed)
        setattr(module, fn_name, resolve(unit_reference))
        shape = dict(spec.cpu_shapes[0])
        ref, inputs = build(spec, shape, "normal", 0, "cpu")  # the judge's trial 0, seed 0
        torch.manual_seed(0)
        new = module.ModelNew(*task_module(spec).get_init_inputs(**shape))
        new.load_state_dict(ref.state_dict(), strict=False)
        with torch.no_grad():
            expected = [o.dtype for o in as_list(ref(*inputs))]
            outs = [o.to(d) for o, d in zip(as_list(new(*inputs)), expected)]
            refs = reference64(ref, inputs)
        if len(outs) != len(expected):
            return False
        failure = first_failure(spec, outs, refs, [dtype_name(d) for d in expected], "cpu")
    except Exception as exc:  # noqa: BLE001 - a seed that cannot even run its reference is dropped
        log.info("search seed for %s dropped: %s: %s", spec.id, type(exc).__name__, exc)
        return False
    if failure is not None:
        log.info("search seed for %s dropped: %s", spec.id, failure.get("reason", failure))
    return failure is None


__all__ = ["computes_task"]
