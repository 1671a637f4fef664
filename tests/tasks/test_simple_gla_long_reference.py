"""``simple_gla_long_bf16`` has its own loop-free reference ``Model``: it must compute the same
function as the short task's chunk-loop reference (to float64 rounding in float64, to bfloat16
rounding on the normal bfloat16/float32 inputs), and its graph must not grow with T, so that the
judge's ``torch.compile`` baseline sees a small graph at T = 32768 instead of 512 unrolled chunks."""

from __future__ import annotations

import pytest
import torch

from hawkeye_env.judge.shared.inputs import draw_like
from hawkeye_env.tasks.simple_gla_fwd_bf16 import task as short
from hawkeye_env.tasks.simple_gla_long_bf16 import task as long_task
from hawkeye_env.tasks.spec import DISTRIBUTIONS

SHAPES = (  # (B, H, T, D): the task's CPU shapes, exactly one chunk, one chunk plus one token
    (1, 2, 333, 16),
    (1, 1, 200, 32),
    (1, 1, 64, 8),
    (1, 1, 65, 8),
    (2, 1, 1, 8),
)


def _inputs(shape, dist, seed):
    b, h, t, d = shape
    gen = torch.Generator().manual_seed(seed)
    qkv = [draw_like(torch.empty(b, h, t, d, dtype=torch.bfloat16), dist, gen) for _ in range(3)]
    return [*qkv, draw_like(torch.empty(b, h, t, dtype=torch.float32), dist, gen)]


def _rel(a, b):
    return ((a.double() - b.double()).norm() / b.double().norm()).item()


def test_cpu_shapes_are_covered():
    assert {tuple(s.values()) for s in long_task.SPEC.cpu_shapes} <= set(SHAPES)


@pytest.mark.parametrize("dist", DISTRIBUTIONS)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_float64_equals_loop_reference(shape, dist):
    inputs = [t.double() for t in _inputs(shape, dist, seed=0)]
    with torch.no_grad():
        out = long_task.Model()(*inputs)
        ref = short.Model()(*inputs)
    assert out.dtype == torch.float64 and out.shape == ref.shape
    assert _rel(out, ref) <= 1e-10


@pytest.mark.parametrize("dist", DISTRIBUTIONS)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_bf16_path_matches_loop_reference(shape, dist):
    inputs = _inputs(shape, dist, seed=1)
    with torch.no_grad():
        out = long_task.Model()(*inputs)
        ref = short.Model()(*inputs)
    assert out.dtype == torch.bfloat16 and out.shape == ref.shape
    assert torch.isfinite(out).all()
    # Both compute in float32 and round to bfloat16: differences are at most a few bf16 ulps.
    scale = ref.float().abs().max().item()
    assert (out.float() - ref.float()).abs().max().item() <= 2 ** -6 * scale
    assert _rel(out, ref) <= 1e-3


def test_float32_long_sequence_matches_float64():
    """Many chunks with heavy-tailed gates: the loop-free state scan keeps float32 exact enough
    (no differences of long cumulative sums)."""
    inputs = _inputs((1, 1, 64 * 96 + 17, 8), "heavy_tailed", seed=2)
    with torch.no_grad():
        ref = short.Model()(*[t.double() for t in inputs])
        out32 = long_task.Model()(*[t.float() for t in inputs])
    assert _rel(out32, ref) <= 1e-5


def _dynamo_nodes(t_len: int) -> list[int]:
    """Node counts of the FX graphs dynamo captures for the Model at T = t_len (no C++ compiler
    needed: the backend records the graph and runs it as is)."""
    torch._dynamo.reset()
    counts = []

    def backend(gm, example_inputs):
        counts.append(len(gm.graph.nodes))
        return gm.forward

    inputs = _inputs((1, 1, t_len, 8), "normal", seed=3)
    compiled = torch.compile(long_task.Model(), backend=backend, dynamic=False, fullgraph=True)
    with torch.no_grad():
        out = compiled(*inputs)
        ref = long_task.Model()(*inputs)
    torch.testing.assert_close(out, ref, rtol=0, atol=0)
    torch._dynamo.reset()
    return counts


def test_graph_size_does_not_grow_with_sequence_length():
    # 10 chunks vs 20 chunks (vs 20 chunks plus a partial one): a loop over chunks would unroll into
    # a graph twice as large.
    short_graph, long_graph, padded_graph = _dynamo_nodes(640), _dynamo_nodes(1280), _dynamo_nodes(1290)
    assert len(short_graph) == len(long_graph) == 1
    assert short_graph == long_graph
    assert padded_graph[0] <= long_graph[0] + 8  # the padding adds a few nodes, not one per chunk
