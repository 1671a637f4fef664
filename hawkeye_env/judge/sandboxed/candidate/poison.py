"""Poisoning a strided allocation's whole storage in the candidate's worker (threat model #1, #16).

With ``torch.utils.deterministic.fill_uninitialized_memory`` on, torch fills a new tensor's
elements with NaN (integers with their maximum), but only the elements its view covers: an
``empty_strided((2, 2), (4, 1))`` owns six elements and leaves the two between its rows as the
allocator found them, where a freed tensor's data (the reference's output, run just before) may
still lie. ``guards.OpRecorder`` calls ``poison_storage`` on every tensor these ops return, so a
kernel that reads the gaps reads poison, as it would in any other allocation.
"""

from __future__ import annotations

import torch

# Ops whose result's storage can be larger than its view (``empty`` and ``empty_like`` return dense views).
STRIDED_ALLOCATIONS = frozenset({"empty_strided", "new_empty_strided"})


def poison_storage(t: torch.Tensor) -> None:
    """Fill every element of ``t``'s storage, inside its view or not, with the value torch's own
    poisoning uses for ``t``'s dtype: NaN for floating and complex types, the maximum for integers,
    ``True`` for bool. Does nothing unless deterministic algorithms are on (the worker turns them
    on around candidate calls only) or for a storage that is not a whole number of elements."""
    if not (torch.utils.deterministic.fill_uninitialized_memory and torch.are_deterministic_algorithms_enabled()):
        return
    storage = t.untyped_storage()
    size = t.element_size()
    if storage.nbytes() % size or t.is_quantized:
        return
    flat = torch.empty(0, dtype=t.dtype, device=t.device).set_(storage, 0, (storage.nbytes() // size,), (1,))
    if t.dtype.is_floating_point or t.dtype.is_complex:
        flat.fill_(float("nan"))
    elif t.dtype is torch.bool:
        flat.fill_(True)
    else:
        flat.fill_(torch.iinfo(t.dtype).max)


__all__ = ["STRIDED_ALLOCATIONS", "poison_storage"]
