"""How a launch plan's kernels become launches in the trusted replay, on each device.

A GPU plan's kernels are compiled binaries: ``load_kernels`` writes each cubin and its metadata
under the replay's scratch folder and loads them with Triton's own loader and launcher. A CPU
plan's kernels are source, rebuilt by ``source_rebuild.build_launches``. ``loader`` picks one by
the kernels' form; ``Descriptor`` is a host tensor descriptor as Triton's CUDA launcher reads it.
"""

from __future__ import annotations

import json
import os

import torch

from hawkeye_env.judge.sandboxed.replay.source_rebuild import build_launches
from hawkeye_env.judge.shared.source_kernels import is_source_kernel


class _Source:
    """What Triton's ``CudaLauncher`` reads of a kernel's source: its signature, no constants."""

    def __init__(self, signature: list[str]):
        self.signature = {i: ty for i, ty in enumerate(signature)}
        self.constants: dict = {}
        self.fn = None


class Descriptor:
    """A host tensor descriptor as Triton's launcher reads it (``base``, ``shape``, ``strides``,
    ``block_shape``, ``padding``)."""

    def __init__(self, base, shape, strides, block_shape, padding):
        self.base, self.shape, self.strides, self.block_shape, self.padding = base, shape, strides, block_shape, padding


def load_kernels(kernels: list[dict], folder: str) -> list:
    """Triton ``CompiledKernel`` objects for the plan's kernels, their files written under
    ``folder`` and loaded by Triton's own loader (``_init_handles``: the launcher, compiled from
    the validated signature, and the cubin). Returns one ``launch(grid, args)`` per kernel."""
    from triton.compiler.compiler import CompiledKernel

    launches = []
    for i, k in enumerate(kernels):
        where = os.path.join(folder, f"kernel-{i}")
        os.makedirs(where, exist_ok=True)
        meta_path, cubin_path = os.path.join(where, f"{k['name']}.json"), os.path.join(where, f"{k['name']}.cubin")
        with open(meta_path, "w", encoding="utf-8") as f:
            f.write(k["metadata"])
        with open(cubin_path, "wb") as f:
            f.write(k["cubin"])
        compiled = CompiledKernel(_Source(k["signature"]), {f"{k['name']}.json": meta_path,
                                                            f"{k['name']}.cubin": cubin_path},
                                  json.loads(k["metadata"]).get("hash", f"kernel-{i}"))
        compiled._init_handles()
        launches.append(_launcher(compiled))
    return launches


def _launcher(compiled):
    def launch(grid, args):
        stream = torch.cuda.current_stream().cuda_stream
        compiled.run(grid[0], grid[1], grid[2], stream, compiled.function, compiled.packed_metadata,
                     None, None, None, *args)

    return launch


def loader(kernels: list, cuda: bool):
    """How a plan's kernels become launches: rebuilt from source (a CPU plan), loaded as cubins (a
    GPU plan on CUDA); a binary plan off CUDA has none (tests run it with stand-in launches)."""
    if any(map(is_source_kernel, kernels)):
        return build_launches
    return load_kernels if cuda else (lambda kernels, folder: [])


def folder_for(root: str, i: int) -> str:
    where = os.path.join(root, f"plan-{i}")
    os.makedirs(where, exist_ok=True)
    return where


__all__ = ["Descriptor", "folder_for", "load_kernels", "loader"]
