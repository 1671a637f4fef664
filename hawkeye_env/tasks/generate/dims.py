"""Shapes of generated tasks: realistic model dimensions for the timed GPU shape, small odd sizes
for the CPU interpreter.

Every shape key has a role (``ROLES``): the GPU value is drawn from sizes of released models
(hidden sizes of Llama, Mistral, Qwen and GPT-2 families, their FFN widths, vocabularies, head
counts and head dims) or from odd sizes that are no power of two; the two CPU values are distinct
small odd-ish sizes, so every key varies between the CPU shapes and the judge's shape family
(``spec.derived_family``) draws hidden shapes for it. ``fit`` shrinks the GPU shape's batch-like
keys until its working set is within ``GPU_WORKSET_BYTES``.

Example::

    >>> import random
    >>> rng = random.Random(0)
    >>> gpu, cpu = draw_shapes(rng, {"M": "rows", "N": "cols"})
    >>> sorted(gpu) == sorted(cpu[0]) == ["M", "N"] and cpu[0]["N"] != cpu[1]["N"]
    True
"""

from __future__ import annotations

import random
from collections.abc import Callable

# Model widths: GPT-2/BERT 768, 1024, 1536; Llama/Mistral/Qwen 2048-8192 (hidden) and their FFN
# widths (2816 Qwen-1.8B, 5632 TinyLlama, 11008 Llama-7B, 13824 Llama-13B, 14336 Mistral/Llama-3-8B).
HIDDEN = (768, 1024, 1536, 2048, 2560, 3072, 4096, 5120, 6144, 8192)
FFN = (2816, 5632, 8192, 11008, 13824, 14336)
# Sizes that are no power of two nor a multiple of 64: a kernel must mask its tails.
ODD = (777, 1000, 1023, 1025, 1999, 3001, 4097, 5003)
VOCAB = (32000, 50257, 128256, 151936)
TOKENS = (64, 256, 512, 1024, 2048, 4096, 8192, 16384)
SEQ = (256, 512, 1024, 2048)
BATCH = (1, 2, 4, 8, 16)
HEAD_DIM = (64, 128)
KV_HEADS = (1, 2, 4, 8)
GROUP = (1, 2, 4, 8)
NORM_GROUPS = (8, 16, 32)

# role -> GPU values, and the CPU values two distinct picks are drawn from. CPU values stay tiny:
# a trial of the largest CPU shape runs under the Triton interpreter in about a second.
ROLES: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    "rows": (TOKENS + ODD[:4], (3, 5, 7, 9, 13)),
    "cols": (HIDDEN + FFN + ODD, (17, 33, 65, 96, 100, 127)),
    "inner": (HIDDEN + ODD[:4], (9, 17, 33, 65)),  # a GEMM's contraction dim
    "batch": (BATCH, (1, 2, 3)),
    "seq": (SEQ, (5, 13, 33, 67)),
    "head_dim": (HEAD_DIM, (16, 32)),
    "kv_heads": (KV_HEADS, (1, 2)),
    "group": (GROUP, (1, 2, 3)),
    "norm_groups": (NORM_GROUPS, (2, 3, 4)),
    "vocab": (VOCAB + ODD, (50, 97, 301)),
    "window": ((128, 256, 512, 1024), (2, 3, 4)),
    "small": ((16, 32, 64, 128), (2, 3, 5)),
}
# The GPU shape's working set (every tensor the eager reference holds at once, fp32 intermediates
# included) at most 2 GiB: the judge's float64 reference doubles it, and a GPU lane judges several
# candidates at once on one 80 GB card.
GPU_WORKSET_BYTES = 2**31
# Keys ``fit`` may shrink, in this order, and the smallest each may become.
SHRINKABLE = {"batch": 1, "rows": 16, "seq": 128, "cols": 256, "vocab": 1000, "inner": 256}


def draw_shapes(rng: random.Random, roles: dict[str, str],
                workset: Callable[[dict], float] | None = None) -> tuple[dict, tuple[dict, dict]]:
    """``(gpu_shape, (cpu_a, cpu_b))`` for the keys of ``roles`` (key -> role name in ``ROLES``),
    the GPU shape shrunk by ``fit`` when ``workset(shape)`` (bytes) exceeds the budget."""
    gpu = {k: rng.choice(ROLES[r][0]) for k, r in roles.items()}
    if workset is not None:
        gpu = fit(gpu, roles, workset)
    pairs = {k: rng.sample(ROLES[r][1], 2) for k, r in roles.items()}
    return gpu, ({k: v[0] for k, v in pairs.items()}, {k: v[1] for k, v in pairs.items()})


def fit(shape: dict, roles: dict[str, str], workset: Callable[[dict], float],
        budget: float = GPU_WORKSET_BYTES) -> dict:
    """``shape`` with its shrinkable keys (``SHRINKABLE``) halved in turn until ``workset(shape)``
    is within ``budget``, or none can shrink further."""
    shape = dict(shape)
    order = [k for role in SHRINKABLE for k, r in roles.items() if r == role]
    while workset(shape) > budget:
        for key in order:
            floor = SHRINKABLE[roles[key]]
            if shape[key] // 2 >= floor:
                shape[key] //= 2
                break
        else:
            return shape
    return shape


def nbytes(dtype: str) -> int:
    """Bytes per element of a dtype name."""
    return {"float64": 8, "float32": 4, "int64": 8, "bfloat16": 2, "float16": 2, "int32": 4}.get(dtype, 1)


def prod(*values: int) -> int:
    out = 1
    for v in values:
        out *= v
    return out
