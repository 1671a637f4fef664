"""The operator graph of a task's reference: traced, hashed, and costed as PyTorch eager runs it.

``trace`` runs one forward of ``Model`` on the meta device (no memory, no arithmetic) under a
``TorchDispatchMode`` and records every aten op: its name, its tensor inputs (which earlier op, input
or parameter produced them) and its other arguments. Any task can be traced, generated, curated or
imported, so the splits can compare graphs across all of them.

Two hashes come from a trace:

* ``graph_hash``, the split's unit: the graph's structure only. Shapes, dtypes and float constants
  are dropped (an RMSNorm is one graph whatever its width, dtype or eps), as are casts and copies;
  integer arguments are kept only where they name dims (``dim``, ``dim0``, ...; normalized to be
  non-negative), never sizes, indices or counts. Nodes are labelled by two rounds of
  Weisfeiler-Lehman refinement (an op with its inputs' labels, a tensor list as the set of its
  labels) and the graph is the *set* of its labels, so a loop over time hashes alike however many
  steps it runs.
* ``task_hash``, a task's identity: the graph hash with dtypes and constants kept, plus the shapes.

``eager_cost`` sums what eager PyTorch moves: every non-view op reads its inputs and writes its
outputs from DRAM, one kernel each; against the task's ``bytes_moved`` floor it gives the headroom a
fused kernel has (``splits.difficulty``).

    >>> import torch
    >>> class Model(torch.nn.Module):
    ...     def forward(self, x):
    ...         return torch.relu(x) * 2
    >>> t = trace(Model(), [torch.empty(4, 8, device="meta")])
    >>> [n.op for n in t.nodes]
    ['relu', 'mul']
    >>> graph_hash(t) == graph_hash(trace(Model(), [torch.empty(3, 5, dtype=torch.bfloat16, device="meta")]))
    True
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

# Schema argument names whose integers name dims (kept in the graph hash); every other integer is
# a size, an index or a count, which varies with the shape.
DIM_ARGS = frozenset({"dim", "dims", "dim0", "dim1", "start_dim", "end_dim", "source", "destination", "keepdim"})
# Ops that move or relabel data without computing: casts and copies (dropped from the graph hash)
# and views (free in the eager cost).
COPIES = frozenset({"_to_copy", "to", "clone", "contiguous", "detach", "alias", "lift_fresh", "copy", "_copy_from"})
VIEWS = frozenset({"view", "_unsafe_view", "reshape", "expand", "t", "transpose", "permute", "unsqueeze", "squeeze",
                   "slice", "select", "as_strided", "alias", "detach", "unflatten", "flatten", "split", "chunk",
                   "unbind", "narrow", "lift_fresh", "view_as", "movedim", "diagonal", "split_with_sizes"})
MATMULS = frozenset({"mm", "bmm", "addmm", "matmul", "baddbmm", "_scaled_mm", "linear"})


@dataclass
class Node:
    """One aten op: ``inputs`` are producer refs (``("in", i)``, ``("p", i)``, ``("op", k)`` the
    k-th node, ``("new", 0)`` a tensor the trace did not see made), ``slots`` the schema argument
    each came from (a tensor list gives several); ``args`` the other arguments as ``(schema name,
    kind, value)``."""

    op: str
    inputs: list[tuple[str, int]]
    args: list[tuple[str, str, object]]
    slots: list[str] = field(default_factory=list)
    in_bytes: int = 0
    out_bytes: int = 0


@dataclass
class Trace:
    nodes: list[Node] = field(default_factory=list)
    n_inputs: int = 0
    n_params: int = 0


def _nbytes(t: torch.Tensor) -> int:
    """Bytes a kernel reads or writes of ``t``: its elements, or its storage when smaller (a broadcast)."""
    dense = t.numel() * t.element_size()
    try:
        return min(dense, t.untyped_storage().nbytes())
    except (RuntimeError, NotImplementedError):
        return dense


class _Recorder(TorchDispatchMode):
    def __init__(self, result: Trace, refs: dict[int, tuple[str, int]], keep: list):
        super().__init__()
        self.result, self.refs, self.keep = result, refs, keep

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        schema = func._schema.arguments
        values = [args[i] if i < len(args) else kwargs.get(a.name, a.default_value) for i, a in enumerate(schema)]
        node = Node(func.overloadpacket.__name__, [], [])
        rank = next((v.dim() for v in values if isinstance(v, torch.Tensor)), 0)
        for arg, value in zip(schema, values):
            leaves, _ = tree_flatten(value)
            for leaf in leaves:
                if isinstance(leaf, torch.Tensor):
                    node.inputs.append(self.refs.get(id(leaf), ("new", 0)))
                    node.slots.append(arg.name)
                    node.in_bytes += _nbytes(leaf)
                else:
                    node.args.append(_arg(arg.name, leaf, rank))
        index = len(self.result.nodes)
        for leaf in tree_flatten(out)[0]:
            if isinstance(leaf, torch.Tensor):
                self.refs[id(leaf)] = ("op", index)
                self.keep.append(leaf)  # ids stay unique while the trace lives
                node.out_bytes += _nbytes(leaf)
        self.result.nodes.append(node)
        return out


def _arg(name: str, value, rank: int) -> tuple[str, str, object]:
    if isinstance(value, bool):
        return name, "bool", value
    if isinstance(value, int):
        if name in DIM_ARGS and name != "keepdim":
            return name, "dim", value % rank if rank and value < 0 else value
        return name, "int", value
    if isinstance(value, float):
        return name, "float", float(f"{value:.6g}")
    if isinstance(value, torch.dtype):
        return name, "dtype", str(value).removeprefix("torch.")
    if value is None or isinstance(value, (str, torch.device, torch.layout, torch.memory_format)):
        return name, "other", None if isinstance(value, (torch.device, torch.layout)) else str(value)
    return name, "other", type(value).__name__


def trace(model: torch.nn.Module, inputs: list) -> Trace:
    """One forward of ``model`` on ``inputs`` (tensors on any device; ``meta`` computes nothing)
    under the recorder. Parameters and buffers are refs ``("p", i)``, inputs ``("in", i)``."""
    result, keep = Trace(), list(inputs)
    refs: dict[int, tuple[str, int]] = {}
    tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
    for i, x in enumerate(tensors):
        refs[id(x)] = ("in", i)
    owned = [*model.parameters(), *model.buffers()]
    for i, p in enumerate(owned):
        refs[id(p)] = ("p", i)
    result.n_inputs, result.n_params = len(tensors), len(owned)
    with torch.no_grad(), _Recorder(result, refs, keep):
        model(*inputs)
    return result


def _labels(t: Trace, typed: bool) -> set[str]:
    """Node labels after two rounds of WL refinement (an op's label with its inputs' labels). In the
    untyped graph a copy is no node: its consumers read what it copied."""
    alias: dict[int, tuple[str, int]] = {}

    def resolve(ref: tuple[str, int]) -> tuple[str, int]:
        while ref[0] == "op" and ref[1] in alias:
            ref = alias[ref[1]]
        return ref

    base: dict[int, str] = {}
    for k, node in enumerate(t.nodes):
        if not typed and node.op in COPIES and node.inputs:
            alias[k] = resolve(node.inputs[0])
            continue
        args = [(n, kind, v) for n, kind, v in node.args
                if typed or kind in ("dim", "bool") or (kind == "other" and n not in ("dtype", "device"))]
        base[k] = json.dumps([node.op, args], default=str)
    labels = dict(base)
    for _ in range(2):
        current = dict(labels)
        for k in base:
            slots: dict[str, list[str]] = {}
            for slot, ref in zip(t.nodes[k].slots, t.nodes[k].inputs):
                kind, i = resolve(ref)
                slots.setdefault(slot, []).append(current.get(i, kind) if kind == "op" else kind)
            # a tensor list (torch.stack of a loop's steps) is the set of its labels, not their count
            ins = [sorted(set(v)) if len(v) > 1 else v for v in slots.values()]
            labels[k] = hashlib.sha256(json.dumps([base[k], ins]).encode()).hexdigest()[:16]
    return set(labels.values())


def graph_hash(t: Trace) -> str:
    """The structure-only hash (module docstring)."""
    return hashlib.sha256(json.dumps(sorted(_labels(t, typed=False))).encode()).hexdigest()[:20]


def task_hash(t: Trace, shapes: list[dict]) -> str:
    """The identity hash: typed labels and the task's shapes."""
    payload = [sorted(_labels(t, typed=True)), [sorted(dict(s).items()) for s in shapes]]
    return hashlib.sha256(json.dumps(payload).encode()).hexdigest()[:20]


def eager_cost(t: Trace) -> dict:
    """``{"kernels", "bytes", "matmuls"}`` of running the trace op by op (views free)."""
    work = [n for n in t.nodes if n.op not in VIEWS]
    return {"kernels": len(work), "bytes": float(sum(n.in_bytes + n.out_bytes for n in work)),
            "matmuls": sum(n.op in MATMULS for n in work)}
