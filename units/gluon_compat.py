"""Gluon names that differ between Triton 3.6 (the H200's) and later releases (3.9 on CI), and the
Hopper check every Gluon unit's dispatch makes.

Triton 3.6 calls the TMA copies ``tma.async_copy_global_to_shared`` and
``tma.async_copy_shared_to_global``; later Gluon renamed them ``tma.async_load`` and
``tma.async_store`` (same arguments) and made the old names raise. The Gluon units call
``tma_load`` and ``tma_store``, which are whichever this Triton provides, so the same kernels
compile under both (``units.lib.gluon_compile``). ``on_hopper`` is where the units' wgmma, TMA and
``setmaxnreg`` exist; elsewhere their experts run a Triton-language twin.
"""

from __future__ import annotations

import torch
from triton.experimental.gluon.language.nvidia.hopper import tma

tma_load = getattr(tma, "async_load", None) or tma.async_copy_global_to_shared
tma_store = getattr(tma, "async_store", None) or tma.async_copy_shared_to_global


def on_hopper(t: torch.Tensor) -> bool:
    """True when ``t`` lives on a Hopper GPU (compute capability 9.x), where the Gluon units' wgmma,
    TMA and ``setmaxnreg`` exist."""
    return t.device.type == "cuda" and torch.cuda.get_device_capability(t.device)[0] == 9
