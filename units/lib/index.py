"""The taxonomy: runnable units discovered from ``units/<name>/meta.py``, plus on-paper slots.

Lookups never import kernel code (Triton), so the judge's parent process and the environment can
browse units and build prompts freely; ``resolve`` imports a callable when one is needed.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path

from units.lib.spec import Unit

UNITS_DIR = Path(__file__).resolve().parents[1]
# The infrastructure (this folder): a package of units/ that is no unit.
LIB_DIR = Path(__file__).resolve().parent
CONTEXT_MODES = ("none", "docs", "units", "full")

# Taxonomy slots of other architectures, described so the table is exhaustive, never run here.
ON_PAPER: tuple[Unit, ...] = (
    Unit("blackwell_tcgen05_tmem", "tcgen05 MMA with tensor memory accumulators", "blackwell",
         "tensor-core MMA (tcgen05) with TMEM", ("bf16", "fp8e4m3"), ("tiled_mma",),
         "Blackwell's tcgen05.mma accumulates in tensor memory (TMEM) instead of registers, freeing "
         "registers for epilogues and deeper pipelines.", runnable=False,
         why="needs sm_100 (tcgen05, TMEM); this machine is Hopper"),
    Unit("blackwell_2cta_mma", "2-CTA cooperative MMA", "blackwell", "2-CTA MMA (cta_group::2)",
         ("bf16", "fp8e4m3"), ("tiled_mma",),
         "Two CTAs of a cluster share one MMA of twice the tile, halving per-CTA operand traffic.",
         runnable=False, why="needs sm_100 cluster MMA; this machine is Hopper"),
    Unit("blackwell_native_fp4", "native block-scaled FP4 MMA", "blackwell",
         "block-scaled MMA (MXFP4 / NVFP4)", ("mxfp4", "nvfp4"), ("block_scaled_gemm",),
         "Blackwell tensor cores consume e2m1 values with e8m0 (MX) or e4m3 (NV) block scales directly.",
         runnable=False, why="needs sm_100 FP4 tensor cores; Hopper dequantizes in registers instead"),
    Unit("mi350_mfma", "MFMA matrix cores", "mi350", "matrix-core MMA (MFMA)", ("bf16", "fp8", "mxfp4"),
         ("tiled_mma",), "AMD CDNA4 MFMA instructions with wave64 tiles and LDS staging.",
         runnable=False, why="needs an AMD MI350 GPU (ROCm)"),
    Unit("mi350_lds_staging", "LDS staging and bank-conflict-free layouts", "mi350",
         "shared-memory (LDS) staging", ("bf16",), ("software_pipelining",),
         "Stage tiles through the 160 KB LDS with padded layouts to avoid bank conflicts.",
         runnable=False, why="needs an AMD MI350 GPU (ROCm)"),
)


@cache
def _runnable() -> dict[str, Unit]:
    found: dict[str, Unit] = {}
    for info in sorted(pkgutil.iter_modules([str(UNITS_DIR)]), key=lambda i: i.name):
        if info.ispkg and (UNITS_DIR / info.name / "meta.py").exists():
            unit = importlib.import_module(f"units.{info.name}.meta").UNIT
            if unit.name != info.name:
                raise RuntimeError(f"units/{info.name}/meta.py names its unit {unit.name!r}")
            found[unit.name] = unit
    return found


def list_units(include_on_paper: bool = True) -> list[Unit]:
    """Runnable units (sorted by name), then on-paper slots."""
    units = list(_runnable().values())
    return units + list(ON_PAPER) if include_on_paper else units


def get_unit(name: str) -> Unit:
    for unit in list_units():
        if unit.name == name:
            return unit
    raise KeyError(f"unknown unit {name!r}; known units: {', '.join(u.name for u in list_units())}")


def units_for_tags(tags: Iterable[str], runnable_only: bool = True) -> list[Unit]:
    """Units serving any of ``tags``, most matching tags first, then by name."""
    wanted = set(tags)
    scored = [(len(wanted & set(u.tags)), u) for u in list_units(not runnable_only)]
    return [u for score, u in sorted(scored, key=lambda p: (-p[0], p[1].name)) if score > 0]


def units_for_strategy(text: str) -> list[Unit]:
    """Units whose strategy or title mentions ``text`` (case-insensitive)."""
    t = text.lower()
    return [u for u in list_units() if t in u.strategy.lower() or t in u.title.lower()]


def unit_file(unit: Unit, filename: str) -> str:
    """Text of ``units/<name>/<filename>``; empty for on-paper slots."""
    path = UNITS_DIR / unit.name / filename
    return path.read_text(encoding="utf-8") if path.exists() else ""


MORE_UNITS_HEADING = "### More units for this task (README.md and kernel.py under each folder)"


def unit_context(tags: Iterable[str], mode: str, budget_chars: int) -> str:
    """The unit context an agent sees for a task with ``tags``.

    Modes (the paper's ablation): ``none`` (empty), ``docs`` (usage guides), ``units`` (guides plus
    the solution kernels' source), ``full`` (plus the naive kernels and PyTorch references). Whole
    units are kept in relevance order until ``budget_chars`` would be exceeded; the relevant units
    left out are then listed one line each (name, language, title, solution path) while the budget
    allows, so an agent still learns that they exist (the Gluon units sort after the Triton ones
    and rarely fit whole in the default budget) and can read or call them.
    """
    if mode not in CONTEXT_MODES:
        raise ValueError(f"context mode must be one of {CONTEXT_MODES}, not {mode!r}")
    if mode == "none":
        return ""
    files = {"docs": ("README.md",), "units": ("README.md", "kernel.py"),
             "full": ("README.md", "kernel.py", "naive.py", "reference.py")}[mode]
    relevant = units_for_tags(tags)
    # The one-line index of every relevant unit but the first keeps up to a quarter of the budget.
    reserve = min(len(_index(relevant[1:])), budget_chars // 4)
    parts: list[str] = []
    used = 0
    for unit in relevant:
        block = "\n\n".join(
            f"### units/{unit.name}/{f}\n" + (f"```python\n{text}```" if f.endswith(".py") else text)
            for f in files if (text := unit_file(unit, f))
        )
        if used + len(block) + (2 + reserve if unit is not relevant[-1] else 0) > budget_chars:
            break
        parts.append(block)
        used += len(block) + 2
    rest = relevant[len(parts):]
    while rest and len(_index(rest)) > budget_chars - used:
        rest = rest[:-1]  # the least relevant first
    if rest:
        parts.append(_index(rest))
    return "\n\n".join(parts)


def _index(units: list[Unit]) -> str:
    """One line per unit (name, language, title, solution path) under ``MORE_UNITS_HEADING``;
    empty for no units."""
    if not units:
        return ""
    lines = [f"- `units/{u.name}` ({u.language}): {u.title}; solution `{u.solution}`" for u in units]
    return "\n".join([MORE_UNITS_HEADING, *lines])


def resolve(path: str) -> Callable:
    """Import ``module:function`` (this imports Triton kernels)."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)
