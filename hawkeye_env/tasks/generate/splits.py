"""Train, validation and test splits without leakage, and a difficulty estimate per task.

A generated task's split is a function of its graph hash alone (``graph.graph_hash``: structure,
no shapes, dtypes or constants), so every task of one graph lands in the same split and no graph
spans two. Graphs of the held-out tasks (every registered task that is not generated: the curated
suite, imported KernelBench levels) are test: a generated task with one of their graphs is test
too. The rest is cut by ``SPLIT_SHARES`` of the hash's range, so the shares hold over graphs, not
tasks.

The difficulty is a static estimate from the eager trace at the GPU shape (``graph.eager_cost``;
for a loop, whose meta trace at the GPU shape takes seconds, at the first CPU shape), until measured
baselines replace it: ``fusion_headroom``, eager's DRAM bytes over the task's floor
(what fusing saves a memory-bound task), ``intensity`` (FLOPs per byte of the floor: above ~100 a
task is compute bound on an H100/H200), ``eager_kernels`` and a ``level`` in KernelBench's sense:
1 a single op, 2 a fusion of several ops, 3 a GEMM or attention with more ops around it, or a loop.
"""

from __future__ import annotations

import math
from types import ModuleType

import torch

from hawkeye_env.tasks.generate.graph import Trace, eager_cost, graph_hash, trace
from hawkeye_env.tasks.spec import TaskSpec

SPLIT_SHARES = (("train", 0.8), ("validation", 0.1), ("test", 0.1))


def split_for(graph: str, held_out: set[str] | frozenset[str] = frozenset()) -> str:
    """The split of a task whose graph hash is ``graph`` (module docstring).

    >>> split_for("ffffffffffff", set()), split_for("000000000000", {"000000000000"})
    ('test', 'test')
    """
    if graph in held_out:
        return "test"
    u = int(graph[:12], 16) / 16**12
    edge = 0.0
    for name, share in SPLIT_SHARES:
        edge += share
        if u < edge:
            return name
    return SPLIT_SHARES[-1][0]


def trace_module(module: ModuleType, shape: dict, device: str = "meta") -> Trace:
    """One forward of a task module's ``Model`` at ``shape``, built on ``device`` (``meta``: no memory)."""
    with torch.device(device):
        model = module.Model(*module.get_init_inputs(**shape))
        inputs = module.get_inputs(**shape)
    return trace(model, inputs)


def held_out_graphs(modules: list[ModuleType]) -> dict[str, str]:
    """Graph hash -> task id for held-out task modules, each traced at its first two CPU shapes on
    the CPU and, unless those show a loop (different op counts), at its GPU shape on the meta
    device: a reference whose code path depends on the shape (attention done a few heads at a time
    at large shapes) has a graph for each."""
    found = {}
    for module in modules:
        spec = module.SPEC
        traces = []
        for shape, device in [(dict(s), "cpu") for s in spec.cpu_shapes[:2]] + [(dict(spec.gpu_shapes[0]), "meta")]:
            if device == "meta" and len({len(t.nodes) for t in traces}) > 1:
                break
            try:
                traces.append(trace_module(module, shape, device))
            except Exception:  # noqa: BLE001 - an op without a meta kernel: the other traces stand
                continue
        for t in traces:
            found.setdefault(graph_hash(t), spec.id)
    return found


def difficulty(spec: TaskSpec, t: Trace, shape: dict, loop: bool = False) -> dict:
    """The static difficulty estimate of ``spec`` from its trace ``t`` at ``shape`` (module
    docstring); ``loop``: the forward loops over a dim (its op count grows with the shape)."""
    cost = eager_cost(t)
    floor = spec.bytes_moved(**shape)
    headroom = cost["bytes"] / floor if floor > 0 else 1.0
    level = 3 if loop or (cost["matmuls"] and cost["kernels"] > cost["matmuls"] + 1) else \
        2 if cost["kernels"] > 1 else 1
    return {"level": level, "loop": loop, "at": "gpu_shape" if shape == dict(spec.gpu_shapes[0]) else "cpu_shape",
            "eager_kernels": cost["kernels"], "fusion_headroom": round(max(headroom, 1.0), 3),
            "intensity": round(spec.flops(**shape) / floor, 3) if floor > 0 else math.inf}
