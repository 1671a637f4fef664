"""Recording a forward (``plan_recorder``) and running the plan (``replay.PlanRunner``) on CPU,
with stand-in kernels: the replay reproduces an honest forward on inputs and parameters the
recording never saw, and what a forward does outside its recorded kernels and ops is lost."""

from __future__ import annotations

import pytest
import torch

from hawkeye_env.judge.parent.validate.plan_check import plan_problem
from hawkeye_env.judge.sandboxed.candidate.plan_recorder import NotReplayable, PlanRecorder
from hawkeye_env.judge.sandboxed.replay.replay import PlanError, PlanRunner
from hawkeye_env.tasks.spec import ALLOCATION_AND_VIEW_OPS
from tests.judge.replay.fakes import compiled_kernel

CPU = torch.device("cpu")
BIG = torch.zeros((64 << 20) // 4 + 1)  # made before any forward: one element over the constants' budget
MUL = compiled_kernel("mul", ["*fp32", "*fp32", "*fp32", "i32", "constexpr"])


def mul(grid, args):
    """The stand-in device code of MUL: out = a * b (b broadcast over rows)."""
    a, b, out, n, _ = args
    out.copy_(a * b)


def record(forward, x, w):
    with PlanRecorder([x], {"w": w}, device="cpu") as rec:
        outs = forward(rec, x, w)
    return rec.plan(outs), rec.kernels


def honest(rec, x, w):
    out = torch.empty_like(x)
    rec.launch(MUL, (1, 1, 1), (x, w, out, x.numel(), 64))
    return [out.view(-1)]


def test_the_replay_reproduces_an_honest_forward_on_new_inputs_and_parameters():
    plan, kernels = record(honest, torch.randn(3, 5), torch.randn(5))
    assert plan_problem(plan, kernels, ALLOCATION_AND_VIEW_OPS) is None
    x, w = torch.randn(3, 5), torch.randn(5)
    got = PlanRunner(plan, [mul], {"w": w}, CPU, raw_pointers=False)(x)
    assert torch.equal(got[0], (x * w).view(-1))


def test_work_done_outside_the_recorded_steps_does_not_reach_the_replay():
    """The answer written with torch's Python dispatch off (invisible to the recorder) and no
    kernel doing the work: correct in the recording process, garbage in the replay."""

    def cheat(rec, x, w):
        out = torch.empty_like(x)
        rec.launch(MUL, (1, 1, 1), (x, w, out, x.numel(), 64))
        with torch._C._DisableTorchDispatch():
            out.copy_(x + 1)
        return [out]

    x, w = torch.randn(3, 5), torch.randn(5)
    plan, kernels = record(cheat, x, w)
    assert plan_problem(plan, kernels, ALLOCATION_AND_VIEW_OPS) is None
    got = PlanRunner(plan, [lambda g, a: None], {"w": w}, CPU, raw_pointers=False)(x)
    assert not torch.equal(got[0], x + 1)


def test_a_tensor_made_before_the_forward_travels_as_a_constant():
    table = torch.arange(5, dtype=torch.float32)

    def with_table(rec, x, w):
        out = torch.empty_like(x)
        rec.launch(MUL, (1, 1, 1), (x, table, out, x.numel(), 64))
        return [out]

    plan, kernels = record(with_table, torch.randn(2, 5), torch.randn(5))
    const = [b for b in plan["bases"] if b["kind"] == "const"]
    assert len(const) == 1 and const[0]["data"] == table.numpy().tobytes()
    x = torch.randn(2, 5)
    assert torch.equal(PlanRunner(plan, [mul], {"w": torch.zeros(5)}, CPU, raw_pointers=False)(x)[0], x * table)


def test_copying_a_constant_is_not_counted_as_the_forwards_ops():
    """The recorder's snapshot of a constant (``set_``, a host copy) happens below every dispatch
    mode, so the worker's op guard around the recorder sees only the forward's own ops: a
    forward that launches on a cached workspace is not refused for ops it never called."""
    from hawkeye_env.judge.sandboxed.candidate.guards import OpRecorder

    table = torch.arange(5, dtype=torch.float32)

    def with_table(rec, x, w):
        out = torch.empty_like(x)
        rec.launch(MUL, (1, 1, 1), (x, table, out, x.numel(), 64))
        return [out]

    x, w = torch.randn(2, 5), torch.randn(5)
    with OpRecorder() as ops:
        plan, _ = record(with_table, x, w)
    assert [b["kind"] for b in plan["bases"]].count("const") == 1
    assert not {"set_", "_to_copy"} & set(ops.ops), dict(ops.ops)
    assert ops.ops["empty_like"] == 1  # the forward's own ops are still all counted


def test_views_and_in_place_ops_replay_on_the_replays_own_storages():
    def viewy(rec, x, w):
        out = torch.zeros(x.shape[0] * 2, x.shape[1])
        half = out.narrow(0, x.shape[0], x.shape[0])
        rec.launch(MUL, (1, 1, 1), (x, w, half, x.numel(), 64))
        out.narrow(0, 0, 1).fill_(7.0)
        return [out.t()]

    plan, _ = record(viewy, torch.randn(2, 3), torch.randn(3))
    x, w = torch.randn(2, 3), torch.randn(3)
    want = torch.cat([torch.full((1, 3), 7.0), torch.zeros(1, 3), x * w]).t()
    assert torch.equal(PlanRunner(plan, [mul], {"w": w}, CPU, raw_pointers=False)(x)[0], want)


def test_raw_pointer_arguments_are_the_storage_address_plus_the_byte_offset():
    seen = []

    def offset(rec, x, w):
        out = torch.empty(10)
        rec.launch(MUL, (1, 1, 1), (x[1:], w, out[2:], 4, 64))
        return [out]

    x, w = torch.randn(5), torch.randn(5)
    plan, _ = record(offset, x, w)
    PlanRunner(plan, [lambda g, a: seen.append(a)], {"w": w}, CPU)(x)
    assert seen[0][0] == x.untyped_storage().data_ptr() + 4 and seen[0][3:] == [4, None]


@pytest.mark.parametrize("forward, reason", [
    (lambda rec, x, w: [torch.empty_like(x)], "launched no Triton kernel"),
    (lambda rec, x, w: (rec.launch(MUL, (1, 1, 1), (x.data_ptr(), w, x, 1, 64)), [x])[1], "pointer argument"),
    (lambda rec, x, w: (rec.launch(MUL, (1, 1, 1), (x, w, x, 1, 64)), [3.0])[1], "not a tensor"),
    (lambda rec, x, w: (x.sum().item(), rec.launch(MUL, (1, 1, 1), (x, w, x, 1, 64)), [x])[2],
     "reads device data on the host"),
    (lambda rec, x, w: (rec.launch(MUL, (1, 1, 1), (x, w, BIG, 1, 64)), [x])[1], "bytes of tensors made before it"),
])
def test_forwards_a_plan_cannot_reproduce_are_refused(forward, reason):
    with pytest.raises(NotReplayable, match=reason):
        record(forward, torch.randn(4), torch.randn(4))


def test_ops_while_suspended_are_not_recorded():
    x, w = torch.randn(4), torch.randn(4)
    with PlanRecorder([x], {"w": w}, device="cpu") as rec:
        rec.suspended += 1
        torch.zeros(3)  # an autotuner's benchmarking buffer
        rec.suspended -= 1
        out = torch.empty_like(x)
        rec.launch(MUL, (1, 1, 1), (x, w, out, 4, 64))
    plan = rec.plan([out])
    ops = [s["op"] for s in plan["steps"] if "op" in s]
    assert "aten::empty_like" in ops and not any(op.startswith("aten::zeros") for op in ops)


def test_reset_restores_parameters_and_scrubs_what_the_last_call_made():
    def stateful(rec, x, w):
        out = torch.empty_like(x)
        rec.launch(MUL, (1, 1, 1), (x, w, out, 4, 64))
        return [out]

    x, w = torch.randn(4), torch.randn(4)
    plan, _ = record(stateful, x, w)

    def bump(grid, args):  # writes its parameter: state that would outlive the call
        mul(grid, args)
        args[1].add_(1.0)

    runner = PlanRunner(plan, [bump], {"w": w}, CPU, raw_pointers=False)
    first = runner(x)[0].clone()
    assert runner.changed_params() == ["parameter w"]
    made = runner._made[0]
    runner.reset()
    assert runner.changed_params() == []
    assert torch.equal(torch.empty(0, dtype=torch.uint8).set_(made), torch.full((16,), 255, dtype=torch.uint8))
    assert torch.equal(runner(x)[0], first)


def test_a_plan_that_does_not_fit_the_replays_inputs_or_model_is_a_plan_error():
    plan, _ = record(honest, torch.randn(3, 5), torch.randn(5))
    with pytest.raises(PlanError, match="bytes"):
        PlanRunner(plan, [mul], {"w": torch.randn(5)}, CPU, raw_pointers=False)(torch.randn(4, 5))
    with pytest.raises(PlanError, match="lacks"):
        PlanRunner(plan, [mul], {}, CPU, raw_pointers=False)
    with pytest.raises(PlanError, match="shape"):
        PlanRunner(plan, [mul], {"w": torch.randn(6)}, CPU, raw_pointers=False)
