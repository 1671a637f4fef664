"""The grammar: each family draws one ``TaskDraft`` from a ``random.Random``.

``FAMILIES`` maps a name to its weight in the mix and its draw function; ``draw_draft`` picks a
family by weight, then the family draws everything else (op variant, dtype, shapes, layouts). The
weights favour what kernel engineers are asked for most: GEMMs with epilogues, norms, attention
and fused elementwise chains.

    >>> import random
    >>> draw_draft(random.Random(0)).family in {"elementwise", "reduction", "normalization", "softmax",
    ...     "gemm", "attention", "scan", "indexing", "quantization"}
    True
"""

from __future__ import annotations

import random
from collections.abc import Callable

from hawkeye_env.tasks.generate.draft import TaskDraft
from hawkeye_env.tasks.generate.families.attention import draw_attention
from hawkeye_env.tasks.generate.families.elementwise import draw_chain, draw_glu
from hawkeye_env.tasks.generate.families.gemm import draw_gemm
from hawkeye_env.tasks.generate.families.indexing import draw_indexing
from hawkeye_env.tasks.generate.families.norms import draw_group_norm, draw_row_norm
from hawkeye_env.tasks.generate.families.quant import draw_quant
from hawkeye_env.tasks.generate.families.reductions import draw_reduction
from hawkeye_env.tasks.generate.families.scans import draw_recurrence, draw_scan
from hawkeye_env.tasks.generate.families.softmax import draw_softmax

FAMILIES: dict[str, tuple[float, Callable[[random.Random], TaskDraft]]] = {
    "elementwise_chain": (12, draw_chain),
    "gated_activation": (5, draw_glu),
    "reduction": (10, draw_reduction),
    "row_norm": (10, draw_row_norm),
    "group_norm": (3, draw_group_norm),
    "softmax": (9, draw_softmax),
    "gemm": (16, draw_gemm),
    "attention": (10, draw_attention),
    "scan": (5, draw_scan),
    "recurrence": (4, draw_recurrence),
    "indexing": (8, draw_indexing),
    "quantization": (8, draw_quant),
}


def draw_draft(rng: random.Random, families: tuple[str, ...] | None = None) -> TaskDraft:
    """One draft from a family drawn by weight (from ``families`` only, when given)."""
    names = [n for n in FAMILIES if families is None or n in families]
    if not names:
        raise ValueError(f"no such family among {families}; known: {', '.join(FAMILIES)}")
    name = rng.choices(names, weights=[FAMILIES[n][0] for n in names])[0]
    return FAMILIES[name][1](rng)
