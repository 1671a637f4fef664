"""The task interface of an imported KernelBench file, as its generated task module uses it.

A generated task module (``hawkeye tasks import-kernelbench``) is the KernelBench file verbatim,
followed by a short block that builds a ``KernelBenchTask`` on the module itself and rebinds the
module's ``get_inputs`` and ``get_init_inputs`` to shape-taking versions. ``Model`` stays the
file's own class; the task adds the judge's hooks to it (``kernelbench.trials``).

Roofline floors are lower bounds, never estimates of the real cost (a floor above the true
minimum would reject honest kernels as ``impossible_time``): bytes = inputs + outputs +
parameters, each moved once; FLOPs = one per output element. The importer computes them at the
task's shapes and writes them into the module (``counts``), so listing tasks runs no forward.
"""

from __future__ import annotations

import json
from types import ModuleType

from hawkeye_env.kernelbench.source import bind, forward, tensors
from hawkeye_env.kernelbench.trials import draw_inputs, prepare_trial, reference64
from hawkeye_env.tasks.spec import DEFAULT_TOLERANCES, Tolerance

# Integer outputs (argmax, argmin, masks) are exact or wrong: every bound is zero, so one differing
# element fails (``correctness.compare`` clamps the zero bound to the smallest double).
EXACT = Tolerance(rtol=0.0, atol=0.0, rel_l2=0.0, source="integer outputs (argmax, argmin) must match exactly")


def tolerances_for(integer_dtypes: tuple[str, ...]) -> dict[str, Tolerance]:
    """The default tolerances, plus ``EXACT`` for each integer output dtype."""
    return {**DEFAULT_TOLERANCES, **{d: EXACT for d in integer_dtypes}}


def shape_key(shape: dict) -> str:
    """The key of ``shape`` in a task's ``counts``: its items as sorted JSON."""
    return json.dumps(sorted((k, int(v)) for k, v in shape.items()))


def roofline_counts(module: ModuleType, shape: dict, functions: tuple | None = None,
                    device: str = "meta") -> tuple[float, float]:
    """``(flops, bytes)`` lower bounds at ``shape`` from one forward on ``device`` (module docstring)."""
    return forward_counts(forward(module, shape, device, functions))


def forward_counts(f: dict) -> tuple[float, float]:
    """``(flops, bytes)`` lower bounds of one ``kernelbench.source.forward`` result."""
    moved = sum(t.numel() * t.element_size() for t in tensors(f["inputs"]) + tensors(f["outputs"]) + f["parameters"])
    return float(sum(t.numel() for t in tensors(f["outputs"]))), float(moved)


class KernelBenchTask:
    """``get_inputs(**shape)``, ``get_init_inputs(**shape)``, ``draw_inputs`` and the roofline
    counts of the KernelBench file loaded as ``module``; ``gpu_shape`` is the file's own sizes
    (flat keys, ``kernelbench.source``), ``counts`` maps ``shape_key`` to ``[flops, bytes]``."""

    def __init__(self, module: ModuleType, gpu_shape: dict, counts: dict | None = None):
        self.module = module
        self.gpu_shape = dict(gpu_shape)
        self.counts = dict(counts or {})
        self.functions = (module.get_inputs, module.get_init_inputs)
        model = module.Model
        model.hawkeye_prepare_trial = prepare_trial
        model.hawkeye_reference64 = reference64

    def _bound(self, shape: dict) -> dict:
        full = {**self.gpu_shape, **shape}
        bind(self.module, full)
        return full

    def get_inputs(self, **shape) -> list:
        self._bound(shape)
        return self.functions[0]()

    def get_init_inputs(self, **shape) -> list:
        self._bound(shape)
        return self.functions[1]()

    def draw_inputs(self, shape: dict, distribution: str, seed: int, device: str, draw) -> list:
        """The judge's hook (``kernelbench.trials.draw_inputs``)."""
        return draw_inputs(self.module, self.functions[0], {**self.gpu_shape, **shape}, distribution, seed,
                           device, draw)

    def _counts(self, shape: dict) -> tuple[float, float]:
        full = {**self.gpu_shape, **shape}
        key = shape_key(full)
        if key not in self.counts:
            self.counts[key] = roofline_counts(self.module, full, self.functions)
        return tuple(self.counts[key])

    def flops(self, **shape) -> float:
        return self._counts(shape)[0]

    def bytes_moved(self, **shape) -> float:
        return self._counts(shape)[1]


__all__ = ["EXACT", "KernelBenchTask", "forward_counts", "roofline_counts", "shape_key", "tolerances_for"]
