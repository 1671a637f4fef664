"""H200 sweep of the persistent split-K GEMM's tiles and split counts at a skinny shape (CUDA only).

    python -m bench.kerneldev.sweeps.splitk > splitk.jsonl

At M=64, N=4096, K=16384 (32 output tiles for 132 SMs) it times the ``persistent_splitk`` unit's
naive and solution kernels, then each tile configuration at split-K 1, 4, 8 and 16, with the
judge's timing (``harness.sweep_unit``). The decode and skinny task shapes are swept by
``bench.kerneldev.sweeps.small_m_gemm``.
"""

from __future__ import annotations

import sys

import torch

from bench.kerneldev.sweeps.harness import print_row, sweep_unit
from bench.provenance import provenance

SHAPE = {"M": 64, "N": 4096, "K": 16384}
TILES = ("block_m", "block_n", "block_k", "num_stages", "num_warps")
TILE_ROWS = [(64, 128, 64, 4, 4), (64, 64, 128, 4, 4), (64, 128, 128, 3, 4), (64, 256, 64, 3, 8)]
SPLITS = (1, 4, 8, 16)
CONFIGS = [{**dict(zip(TILES, row)), "split_k": split} for split in SPLITS for row in TILE_ROWS]


def main(argv: list[str] | None = None) -> int:
    if argv:
        print("usage: python -m bench.kerneldev.sweeps.splitk (no arguments)", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("error: the split-K sweep times kernels on a CUDA GPU; none is available", file=sys.stderr)
        return 2
    from units.persistent_splitk import kernel

    print_row(kind="provenance", **provenance("cuda", None, []))
    sweep_unit("persistent_splitk", SHAPE, CONFIGS, lambda cfg, a, b: kernel.matmul(a, b, **cfg))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
