"""CPU shapes for imported KernelBench files: scale every size constant until one forward's
inputs, outputs and parameters fit the interpreter's budget.

The search (``cpu_shape``) keeps the largest scaling that runs (a meta forward) and fits
``CPU_ELEMENT_BUDGET``:

1. every constant above ``KEEP_BELOW`` is divided by ``2**d`` (never below ``MIN_SCALED``); the
   walk starts at the ``d`` where nothing shrinks further and grows the shape one doubling at a
   time (small shapes are cheap to run: a meta forward of an LSTM at its GPU shape takes
   seconds), until a doubling whose every variant that runs misses the budget. The largest odd
   variant that fits (``| 1``, exercising masked tails) wins over any even one; the largest even
   variant is kept for files whose structure rejects odd sizes;
2. when no such scaling fits (a 5-D input whose batch, depth and channels are 16 or less), the
   constants at or below ``KEEP_BELOW`` are halved too, down to ``MIN_SMALL``, except those whose
   name marks them as structure (``STRUCTURAL``: kernel sizes, strides, paddings, axes, groups,
   heads), the floor of step 1 halves with them, and step 1 runs again;
3. when still nothing fits (one constant cannot shrink with the rest: GroupNorm's 16 groups
   need 16 channels while the batch and the image could halve further), the smallest runnable
   shape so far has its constants halved one at a time, largest first, keeping each halving that
   still runs, until it fits or none does.

The result says why when nothing fits: sizes fixed inside ``Model`` (VGG's channel counts), a
structure no scaled shape satisfies, or no size constants at all.

    >>> scaled({"batch_size": 16, "dim": 16384, "kernel_size": 3}, 4, 0, odd=True)
    {'batch_size': 16, 'dim': 1025, 'kernel_size': 3}
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from types import ModuleType

from hawkeye_env.kernelbench.source import forward, tensors

# Interpreter budget: elementwise and reduction kernels over 16k elements judge in about a second
# per trial under the Triton CPU interpreter; a 64^3 matmul (12k elements) in about two. Inputs,
# outputs and the model's parameters and buffers all count.
CPU_ELEMENT_BUDGET = 16384
# Constants at or below this are kernel sizes, strides, head counts or small dims: kept in step 1.
KEEP_BELOW = 16
# Step 1 never scales a constant below this (odd variant: one more).
MIN_SCALED = 8
# Step 2 halves small constants down to this; constants at or below it are never touched.
MIN_SMALL = 2
MAX_SMALL_HALVINGS = 3
STRUCTURAL = re.compile(r"kernel|stride|pad|dilation|dim$|^dim|axis|group|head|window|^k$|_k$", re.IGNORECASE)


@dataclass
class ShapeSearch:
    """``shape``: the CPU shape found, or None and ``reason`` says why; ``elements``: inputs,
    outputs and parameters at it (or at the smallest runnable scaling when none fits)."""

    shape: dict | None
    reason: str = ""
    elements: dict | None = None


def scaled(gpu: dict, doublings: int, small_halvings: int, odd: bool) -> dict:
    """``gpu`` with every size above ``KEEP_BELOW`` divided by ``2**doublings`` (at least
    ``MIN_SCALED >> small_halvings``, ``| 1`` when ``odd``) and every non-structural size in
    ``(MIN_SMALL, KEEP_BELOW]`` divided by ``2**small_halvings`` (at least ``MIN_SMALL``)."""
    shape = {}
    for k, v in gpu.items():
        if v > KEEP_BELOW:
            s = max(max(MIN_SMALL, MIN_SCALED >> small_halvings), v >> doublings)
            shape[k] = s | 1 if odd else s
        elif v > MIN_SMALL and small_halvings and not STRUCTURAL.search(k.split(".")[0]):
            shape[k] = max(MIN_SMALL, v >> small_halvings)
        else:
            shape[k] = v
    return shape


def elements(module: ModuleType, shape: dict, device: str = "meta") -> dict:
    """Element counts of one forward at ``shape`` on ``device``: ``inputs``, ``outputs``, ``parameters``."""
    f = forward(module, shape, device)
    return {"inputs": sum(t.numel() for t in tensors(f["inputs"])),
            "outputs": sum(t.numel() for t in tensors(f["outputs"])),
            "parameters": sum(t.numel() for t in f["parameters"])}


def _steps(gpu: dict) -> int:
    """Doublings after which no constant above ``KEEP_BELOW`` shrinks further."""
    largest = max((v for v in gpu.values() if v > KEEP_BELOW), default=0)
    return max(largest.bit_length() - MIN_SCALED.bit_length() + 1, 0)


def _no_fit(budget: int, smallest, last_error: str) -> ShapeSearch:
    if smallest is None:
        return ShapeSearch(None, f"no scaled shape runs (last error {last_error})")
    total, counts, _ = smallest
    return ShapeSearch(None, (
        f"the smallest runnable scaling holds {total} elements (inputs {counts['inputs']}, outputs "
        f"{counts['outputs']}, parameters {counts['parameters']}), over the CPU budget of {budget}: sizes "
        "written as literals in the file do not scale"), elements=counts)


def cpu_shape(module: ModuleType, gpu: dict, budget: int = CPU_ELEMENT_BUDGET, device: str = "meta") -> ShapeSearch:
    """The largest scaling of ``gpu`` (module docstring) whose forward on ``device`` (``cpu`` for
    files whose forward has no meta kernels) runs and fits ``budget``."""
    if not any(v > MIN_SMALL for v in gpu.values()):
        return ShapeSearch(None, "the file has no size constants to scale (its sizes are fixed inside Model)")
    seen: dict[tuple, dict | None] = {}
    smallest, last_error = None, ""

    def run(shape: dict) -> dict | None:
        nonlocal smallest, last_error
        key = tuple(sorted(shape.items()))
        if key not in seen:
            try:
                seen[key] = elements(module, shape, device)
            except Exception as exc:  # noqa: BLE001 - a scaled shape the file's structure rejects
                seen[key] = None
                last_error = f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}"[:160]
            counts = seen[key]
            if counts is not None and (smallest is None or sum(counts.values()) < smallest[0]):
                smallest = (sum(counts.values()), counts, shape)
        return seen[key]

    for small in range(MAX_SMALL_HALVINGS + 1):
        best: dict[bool, ShapeSearch] = {}
        for d in range(_steps(gpu), -1, -1):
            ran = fitted = False
            for odd in (True, False):
                shape = scaled(gpu, d, small, odd)
                counts = run(shape)
                ran = ran or counts is not None
                if counts is not None and sum(counts.values()) <= budget:
                    best[odd], fitted = ShapeSearch(shape, elements=counts), True
            if ran and not fitted:
                break  # past the budget: larger scalings only hold more
        if best:
            return best.get(True) or best[False]
    if smallest is not None:
        found = _one_at_a_time(run, smallest[2], budget)
        if found is not None:
            return found
    return _no_fit(budget, smallest, last_error)


def _one_at_a_time(run, shape: dict, budget: int) -> ShapeSearch | None:
    """Step 3 of the search (module docstring) from ``shape``."""
    shape = dict(shape)
    while True:
        for k in sorted(shape, key=shape.get, reverse=True):
            v = shape[k]
            if v <= MIN_SMALL or (v <= KEEP_BELOW and STRUCTURAL.search(k.split(".")[0])):
                continue
            trial = {**shape, k: max(MIN_SMALL, v >> 1) | (v & 1)}
            if trial[k] == v:
                continue
            counts = run(trial)
            if counts is not None:
                shape = trial
                if sum(counts.values()) <= budget:
                    return ShapeSearch(shape, elements=counts)
                break
        else:
            return None


__all__ = ["CPU_ELEMENT_BUDGET", "KEEP_BELOW", "ShapeSearch", "cpu_shape", "elements", "scaled"]
