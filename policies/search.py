"""A non-LLM baseline policy: tune the knobs of Triton sources it can compose.

It starts from sources that already define ``ModelNew``: the task's expert solution
(``registry.solution_source``), the same expert with the unit modules it imports inlined when that
puts knobs in reach (``inline.py``: an expert calling ``fp8_gemm_per_tensor`` has none of its own),
and, for each runnable unit serving the task's tags
(``units.lib.index.units_for_tags``) whose solution callable can be called with the forward's inputs and
the module's attributes, a *unit seed*: the unit's ``kernel.py`` inlined under the expert's
``__init__`` and a ``forward`` calling the unit's function, kept only if it computes the task with
the unit's PyTorch reference in place of its kernel (``seed_check.py``). It then mutates tuning knobs found with
``ast``: integer literals assigned to, passed as, returned by or defaulted for a known knob name
(``BLOCK``, ``BLOCK_M/N/K``, ``GROUP_M``, ``num_warps``, ``num_stages``...; see ``KNOBS``). Powers of
two move to another power of two within a factor 4 and inside the knob's bounds; ``num_stages``
moves by 1 or 2. Literals are replaced in place in the text, so comments and layout survive and the
result always parses. A mutation estimated not to compile on a Hopper GPU (a tile accumulator past
the register file, a K pipeline past shared memory, a 1-D block too wide for its warps;
``feasibility.py``) is drawn again, up to ``FEASIBILITY_ATTEMPTS`` times, else the parent is kept;
an estimate no larger than the parent's always passes, so whatever a seed already does stays
reachable. Other invalid knob values (a tile too small for ``tl.dot``, a block below a row) are left
for the judge to reject, as for any policy.

A task without an expert solution (a generated one, ``hawkeye tasks generate``) has only unit seeds,
composed with its reference ``Model``'s ``__init__`` in place of the expert's and kept by the same
check. A task with neither gets no reply: ``sample`` returns empty replies and appends a record to
``errors`` (``task_id``, ``trajectory``, ``turn``, ``missing``, ``error`` starting ``NO_SEED``), the
policy-failure record ``evals/best_of_n.py`` reports as ``policy_error`` rows, never as a reward.

Deterministic: sample ``i`` of an observation depends only on ``seed``, the task, the turn, the
observation's ``trajectory`` key and the base source. On the first turn sample 0 is the unmodified
expert source (the first unit seed, without an expert) and the next samples the other seeds
unmodified; the rest mutate the seeds that have knobs, in turn. Later turns mutate the
trajectory's last compiled source (``last_compiled_source``, else ``source``).

Example::

    from policies.search import SearchPolicy, knob_sites
    policy = SearchPolicy(seed=0)
    obs = {"task_id": "gemm_bf16", "prompt": "", "source": "", "feedback": "", "turn": 0}
    [actions] = policy.sample([obs], n=4)   # fenced ```python blocks
"""

from __future__ import annotations

import ast
import functools
import hashlib
import logging
import math
import random
import re
from dataclasses import dataclass, replace
from pathlib import Path

from hawkeye_env.tasks.registry import get_task, solution_source, task_module
from hawkeye_env.tasks.spec import TaskSpec
from policies.feasibility import BLOCK_1D_NAME, NUM_STAGES_NAME, NUM_WARPS_NAME, TILE_SIDE_NAME, acceptable, knob_values
from policies.inline import inline_unit_imports
from policies.seed_check import computes_task

log = logging.getLogger(__name__)

# name pattern -> (lower bound, upper bound, step kind); the patterns of the knobs that
# feasibility.py's estimates use are defined there. Bounds: 1-D blocks from 64 (two warps of one element each) to
# 16384 (32 fp32 registers per thread at 16 warps, units/row_reduction's limit); tile sides from 16
# (the smallest tl.dot operand side) to 1024; GROUP_M to 32 tile rows; num_warps 1-16 (512 threads,
# the largest Triton default-configs use); num_stages 1-5 (five 128x256x64 bf16 stages already
# exceed Hopper's 227 KB shared memory). A literal outside its bounds widens them to include
# itself, so the expert's own value always stays reachable.
KNOBS: tuple[tuple[re.Pattern[str], int, int, str], ...] = (
    (BLOCK_1D_NAME, 64, 16384, "pow2"),
    (TILE_SIDE_NAME, 16, 1024, "pow2"),
    (re.compile(r"GROUP(_SIZE)?_[MN]|group_(size_)?[mn]"), 1, 32, "pow2"),
    (NUM_WARPS_NAME, 1, 16, "pow2"),
    (NUM_STAGES_NAME, 1, 5, "linear"),
)
MAX_MUTATED_KNOBS = 3
DEDUP_ATTEMPTS = 8
# Draws of one mutation before ``mutate`` gives up on finding a plausibly compilable child.
FEASIBILITY_ATTEMPTS = 8
# Sources whose knob sites are kept: every task's seeds and their recent mutations.
KNOB_CACHE_SIZE = 1024
NO_SEED = "no expert to search from"


@dataclass(frozen=True)
class KnobSite:
    """One integer literal of a knob: 1-based line, UTF-8 byte columns, value and allowed range."""

    name: str
    line: int
    col: int
    end_col: int
    value: int
    lo: int
    hi: int
    kind: str

    def choices(self) -> list[int]:
        """Other values this literal may take (empty when none fits the bounds)."""
        if self.kind == "linear":
            values = [self.value + d for d in (-2, -1, 1, 2)]
        else:
            base = 1 << round(math.log2(self.value))
            values = [base << 1, base << 2, base, base >> 1, base >> 2]
        lo, hi = min(self.lo, self.value), max(self.hi, self.value)
        return sorted({v for v in values if lo <= v <= hi and v != self.value})


def _knob(name: str) -> tuple[int, int, str] | None:
    for pattern, lo, hi, kind in KNOBS:
        if pattern.fullmatch(name.strip("_")):
            return lo, hi, kind
    return None


def _result_literals(node: ast.AST) -> list[ast.Constant]:
    """Positive int literals an expression can evaluate to (a literal, or the arms of ``a if c else b``)."""
    if isinstance(node, ast.Constant) and type(node.value) is int and node.value > 0:
        return [node]
    if isinstance(node, ast.IfExp):
        return _result_literals(node.body) + _result_literals(node.orelse)
    return []


def _named_values(tree: ast.AST) -> list[tuple[str, ast.AST]]:
    """(knob-candidate name, value expression) pairs from every place a knob value is written."""
    pairs: list[tuple[str, ast.AST]] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Name):
                    pairs.append((target.id, node.value))
                elif isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                    pairs += [(t.id, v) for t, v in zip(target.elts, node.value.elts) if isinstance(t, ast.Name)]
        elif isinstance(node, ast.keyword) and node.arg:
            pairs.append((node.arg, node.value))
        elif isinstance(node, ast.Dict):
            pairs += [(k.value, v) for k, v in zip(node.keys, node.values)
                      if isinstance(k, ast.Constant) and isinstance(k.value, str)]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            positional = args.posonlyargs + args.args
            pairs += [(a.arg, d) for a, d in zip(positional[len(positional) - len(args.defaults):], args.defaults)]
            pairs += [(a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
            pairs += [(node.name, r.value) for r in ast.walk(node) if isinstance(r, ast.Return) and r.value]
    return pairs


def knob_sites(source: str) -> list[KnobSite]:
    """Every mutable knob literal of ``source``, in text order; [] if it does not parse."""
    return list(_knob_sites(source))


@functools.lru_cache(maxsize=KNOB_CACHE_SIZE)
def _knob_sites(source: str) -> tuple[KnobSite, ...]:
    """``knob_sites``, cached: sampling parses each seed once per mutation and per feasibility check
    (a ``SearchPolicy.sample`` of 14 candidates parsed its two seeds 14 times, 85% of its time)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    sites: dict[tuple[int, int], KnobSite] = {}
    for name, value in _named_values(tree):
        bounds = _knob(name)
        if bounds is None:
            continue
        for lit in _result_literals(value):
            if lit.lineno == lit.end_lineno:
                sites[(lit.lineno, lit.col_offset)] = KnobSite(
                    name, lit.lineno, lit.col_offset, lit.end_col_offset, lit.value, *bounds)
    return tuple(sites[k] for k in sorted(sites))


def apply_values(source: str, changes: dict[KnobSite, int]) -> str:
    """``source`` with each site's literal replaced by its new value (byte-exact elsewhere)."""
    lines = source.encode("utf-8").split(b"\n")
    for site in sorted(changes, key=lambda s: (s.line, s.col), reverse=True):
        row = lines[site.line - 1]
        lines[site.line - 1] = row[: site.col] + str(changes[site]).encode() + row[site.end_col:]
    return b"\n".join(lines).decode("utf-8")


def mutate(source: str, rng: random.Random, max_knobs: int = MAX_MUTATED_KNOBS,
           attempts: int = FEASIBILITY_ATTEMPTS) -> str:
    """Change 1..``max_knobs`` knob literals of ``source`` to other allowed values.

    A draw that ``feasibility.acceptable`` rejects against ``source`` is redrawn, up to ``attempts``
    draws in all; ``source`` itself comes back when none is acceptable or it has no knob to change."""
    every_site = knob_sites(source)
    sites = [s for s in every_site if s.choices()]
    if not sites:
        return source
    parent = knob_values(every_site)
    for _ in range(attempts):
        chosen = rng.sample(sites, rng.randint(1, min(max_knobs, len(sites))))
        changes = {s: rng.choice(s.choices()) for s in chosen}
        child = knob_values(replace(s, value=changes.get(s, s.value)) for s in every_site)
        if acceptable(parent, child):
            mutated = apply_values(source, changes)
            ast.parse(mutated)
            return mutated
    return source


# -- unit seeds ---------------------------------------------------------------------------------


def _function(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    return next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)


def _call_arguments(fn: ast.FunctionDef, inputs: list[str], attributes: set[str]) -> list[str] | None:
    """Keyword arguments calling ``fn`` from ``forward(inputs)`` of a module with ``attributes``.

    A parameter named like a forward input takes it, one named like a ``self.`` attribute takes the
    attribute, one with a default is left out; any other parameter, or a forward input left unused,
    means the unit does not fit the task (None)."""
    args = fn.args
    positional = args.posonlyargs + args.args
    defaulted = {a.arg for a in positional[len(positional) - len(args.defaults):]}
    defaulted |= {a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None}
    call: list[str] = []
    skipped_positional = False
    for a in positional + args.kwonlyargs:
        if a.arg in inputs:
            value = a.arg
        elif a.arg in attributes:
            value = f"self.{a.arg}"
        elif a.arg in defaulted:
            skipped_positional |= a in args.posonlyargs
            continue
        else:
            return None
        if a in args.posonlyargs:
            if skipped_positional:
                return None
            call.append(value)
        else:
            call.append(f"{a.arg}={value}")
    used = {c.split("=")[-1] for c in call}
    return call if set(inputs) <= used else None


def compose_unit_seed(spec: TaskSpec, solution: str, unit_name: str, unit_solution: str,
                      model_class: str = "ModelNew") -> str | None:
    """A candidate for ``spec`` calling ``unit_solution`` (``module:function``) with the ``__init__``
    of ``solution``'s class ``model_class`` (the expert's ``ModelNew``, or the task module's reference
    ``Model``), the unit's kernel module inlined; None when the unit's function does not fit."""
    module, _, fn_name = unit_solution.partition(":")
    path = Path(__file__).resolve().parent.parent.joinpath(*module.split(".")).with_suffix(".py")
    if not path.exists():
        return None
    unit_src = path.read_text(encoding="utf-8")
    unit_tree, tree = ast.parse(unit_src), ast.parse(solution)
    model = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == model_class), None)
    fn = _function(unit_tree, fn_name)
    if model is None or fn is None:
        return None
    init = next((n for n in model.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
    forward = next((n for n in model.body if isinstance(n, ast.FunctionDef) and n.name == "forward"), None)
    if init is None or forward is None:
        return None
    attributes = {t.attr for n in ast.walk(init) if isinstance(n, (ast.Assign, ast.AnnAssign))
                  for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
                  if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"}
    inputs = [a.arg for a in forward.args.args[1:]]
    call = _call_arguments(fn, inputs, attributes)
    if call is None:
        return None
    dropped = set()
    for node in unit_tree.body:
        is_doc = node is unit_tree.body[0] and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        if is_doc or (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
            dropped |= set(range(node.lineno, node.end_lineno + 1))
    body = "\n".join(line for i, line in enumerate(unit_src.splitlines(), 1) if i not in dropped).strip("\n")
    caller = "the expert ModelNew" if model_class == "ModelNew" else "a ModelNew with the reference's init"
    header = (f'"""Search seed for {spec.id}: units/{unit_name} solution `{fn_name}` inlined, '
              f'called from {caller}."""\n\nfrom __future__ import annotations\n\n')
    init_src = ast.get_source_segment(solution, init, padded=True)
    seed = (f"{header}{body}\n\nimport torch\nfrom torch import nn\n\n\nclass ModelNew(nn.Module):\n"
            f"{init_src}\n\n    def forward(self, {', '.join(inputs)}):\n"
            f"        return {fn_name}({', '.join(call)})\n")
    ast.parse(seed)
    return seed


def task_seeds(task_id: str) -> list[str]:
    """The expert solution; the expert with the unit modules it imports inlined
    (``inline.inline_unit_imports``) when that exposes more knobs; then one composed seed per
    fitting unit (by relevance) that computes the task (``seed_check.computes_task``). A task
    without an expert composes unit seeds on its reference ``Model``'s ``__init__``; [] when none fits."""
    spec = get_task(task_id)
    if spec.solution is None:
        seeds: list[str] = []
        donor, model_class = Path(task_module(spec).__file__).read_text(encoding="utf-8"), "Model"
    else:
        donor, model_class = solution_source(spec), "ModelNew"
        seeds = [donor]
        inlined = inline_unit_imports(donor)
        if inlined is not None and len(knob_sites(inlined)) > len(knob_sites(donor)):
            seeds.append(inlined)
    try:
        from units.lib.index import units_for_tags

        units = units_for_tags(spec.tags)
    except Exception as exc:  # a unit under construction must not take the baseline down
        log.warning("search policy: units unavailable for %s (%s); expert seed only", task_id, exc)
        return seeds
    for unit in units:
        if unit.solution:
            composed = compose_unit_seed(spec, donor, unit.name, unit.solution, model_class)
            fn_name = unit.solution.partition(":")[2]
            if composed is not None and computes_task(spec, composed, fn_name, unit.reference):
                seeds.append(composed)
    return seeds


def fenced(source: str) -> str:
    """``source`` as a reply: one fenced python block."""
    return f"```python\n{source.rstrip()}\n```\n"


class SearchPolicy:
    """Knob search over composed Triton sources; see the module docstring.

    Args:
        seed: the search's seed; equal seeds give equal samples.
        max_knobs: at most this many knobs change per sample.

    ``errors`` collects a record per observation it could not reply to (no seed, no source).
    """

    name = "search"

    def __init__(self, seed: int = 0, max_knobs: int = MAX_MUTATED_KNOBS):
        self.seed = seed
        self.max_knobs = max_knobs
        self._seeds: dict[str, list[str]] = {}
        self.errors: list[dict] = []

    def _rng(self, *parts: object) -> random.Random:
        digest = hashlib.sha256("|".join(map(str, (self.seed, *parts))).encode()).digest()
        return random.Random(int.from_bytes(digest[:8], "little"))

    def seeds(self, task_id: str) -> list[str]:
        if task_id not in self._seeds:
            self._seeds[task_id] = task_seeds(task_id)
        return self._seeds[task_id]

    def describe(self) -> dict:
        return {"seed": self.seed, "max_knobs": self.max_knobs}

    def _sample_one(self, obs: dict, n: int) -> list[str]:
        turn, trajectory = int(obs.get("turn", 0)), int(obs.get("trajectory", 0))
        base = obs.get("last_compiled_source") or obs.get("source") or ""
        bases = [base] if base else self.seeds(obs["task_id"])
        if not bases:
            self.errors.append({"task_id": obs["task_id"], "trajectory": trajectory, "turn": turn, "missing": n,
                                "error": f"{NO_SEED}: task {obs['task_id']} ships no expert solution and no unit "
                                         "seed computes it"})
            log.warning("search policy: %s for %s; %d empty replies", NO_SEED, obs["task_id"], n)
            return [""] * n
        mutable = [b for b in bases if knob_sites(b)] or bases  # a knob-less expert cannot vary
        out: list[str] = []
        for i in range(n):
            # At turn 0 reply i is trajectory ``trajectory + i``'s sample (policies/base.py).
            j, where = (trajectory + i, 0) if turn == 0 else (i, trajectory)
            if turn == 0 and j < len(bases):
                out.append(bases[j])
                continue
            parent = mutable[j % len(mutable)]
            digest = hashlib.sha256(parent.encode()).hexdigest()[:16]
            rng = self._rng(obs["task_id"], turn, where, j, digest)
            child = parent
            for _ in range(DEDUP_ATTEMPTS):
                child = mutate(parent, rng, self.max_knobs)
                if child not in out:
                    break
            out.append(child)
        return [fenced(s) for s in out]

    def sample(self, observations: list[dict], n: int) -> list[list[str]]:
        return [self._sample_one(obs, n) for obs in observations]
