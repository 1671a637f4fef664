"""Non-contiguous storage for trial inputs, with the logical values of the contiguous draw.

A trial's ``layout`` (``plan.plan_trials``) is None (contiguous) or ``{"name": <LAYOUTS entry>}``;
``apply`` gives every eligible tensor input that storage, keeping its values, so references,
worker and replay agree whatever the layout. Every laid-out tensor starts ``PAD_BYTES`` into a
buffer at least as long as its contiguous form and filled with NaN (0 for integers) outside the
view, so a kernel that ignores strides or the storage offset reads NaN or misplaced values, never
outside the allocation. Eligible inputs, per name (``spec.LAYOUTS``):

- ``transposed``: floating, rank >= 2; storage holds the last two dims swapped (``x.mT`` of a
  contiguous ``[..., n, m]``);
- ``sliced``: floating, rank >= 2: rows padded by ``PAD_BYTES`` (a column slice of a wider
  buffer); a vector (a bias, a norm's weight) stays contiguous, as libraries hand it over;
- ``expanded``: floating, rank >= 2, first dim > 1; stride 0 along it, so every slice along the
  first dim holds the first slice's values (the one layout that changes logical values: those of
  a broadcast, the same in every builder of the trial);
- ``offset``: every tensor; contiguous strides (the offset alone).
"""

from __future__ import annotations

import torch

from hawkeye_env.tasks.spec import LAYOUTS

# Padding of a sliced row and the storage offset, in bytes: a multiple of 16, so rows and bases
# stay as aligned as a contiguous tensor's (vectorised and TMA loads need 16-byte alignment).
PAD_BYTES = 64


def _pad(x: torch.Tensor) -> int:
    return max(1, PAD_BYTES // x.element_size())


def _eligible(name: str, x: torch.Tensor) -> bool:
    if name == "offset":
        return True
    if not x.is_floating_point():
        return False
    if name == "transposed":
        return x.dim() >= 2
    if name == "sliced":
        return x.dim() >= 2 and x.numel() > 0
    if name == "expanded":
        return x.dim() >= 2 and x.shape[0] > 1
    raise ValueError(f"unknown layout {name!r}; known: {', '.join(LAYOUTS)}")


def _contiguous_strides(shape) -> list[int]:
    strides, step = [], 1
    for n in reversed(list(shape)):
        strides.insert(0, step)
        step *= max(1, n)
    return strides


def _strides(name: str, x: torch.Tensor) -> list[int]:
    shape = list(x.shape)
    if name == "transposed":
        swapped = _contiguous_strides(shape[:-2] + [shape[-1], shape[-2]])
        return swapped[:-2] + [swapped[-1], swapped[-2]]
    if name == "sliced":
        return _contiguous_strides(shape[:-1] + [shape[-1] + _pad(x)])[:-1] + [1]
    if name == "expanded":
        return [0] + _contiguous_strides(shape[1:])
    return _contiguous_strides(shape)


def _laid_out(name: str, x: torch.Tensor) -> torch.Tensor:
    strides, pad = _strides(name, x), _pad(x)
    span = 1 + sum((n - 1) * st for n, st in zip(x.shape, strides)) if x.numel() else 0
    fill = float("nan") if x.is_floating_point() else 0
    buf = torch.full((pad + max(span, x.numel()) + pad,), fill, dtype=x.dtype, device=x.device)
    out = buf.as_strided(x.shape, strides, pad)
    if name == "expanded":
        out[:1].copy_(x[:1])
    else:
        out.copy_(x)
    return out


def apply(inputs: list, layout: dict | None) -> list:
    """``inputs`` with every eligible tensor in ``layout``'s storage (module docstring); the list
    unchanged for None."""
    if not layout:
        return inputs
    name = layout["name"]
    return [_laid_out(name, x) if isinstance(x, torch.Tensor) and _eligible(name, x) else x for x in inputs]


def eligible_count(inputs: list, name: str) -> int:
    """How many of ``inputs`` ``name`` would lay out."""
    return sum(isinstance(x, torch.Tensor) and _eligible(name, x) for x in inputs)


__all__ = ["PAD_BYTES", "apply", "eligible_count"]
