"""Gluon names that differ between Triton 3.6 (the H200's) and later releases (3.9 on CI).

Triton 3.6 calls the TMA copies ``tma.async_copy_global_to_shared`` and
``tma.async_copy_shared_to_global``; later Gluon renamed them ``tma.async_load`` and
``tma.async_store`` (same arguments) and made the old names raise. The Gluon units call
``tma_load`` and ``tma_store``, which are whichever this Triton provides, so the same kernels
compile under both (``units.gluon_compile``).
"""

from __future__ import annotations

from triton.experimental.gluon.language.nvidia.hopper import tma

tma_load = getattr(tma, "async_load", None) or tma.async_copy_global_to_shared
tma_store = getattr(tma, "async_store", None) or tma.async_copy_shared_to_global
