"""Strided allocations in the candidate's worker are poisoned between their elements too
(``poison.py``): torch's own poisoning fills only the elements a view covers, and the gaps of an
``empty_strided`` view could hold a freed tensor's data (the reference's output)."""

from __future__ import annotations

import pytest
import torch

from hawkeye_env.judge.sandboxed.candidate.guards import OpRecorder
from hawkeye_env.judge.sandboxed.candidate.poison import poison_storage
from hawkeye_env.judge.sandboxed.common.serve_loop import deterministic


def _whole_storage(t: torch.Tensor) -> torch.Tensor:
    storage = t.untyped_storage()
    return torch.empty(0, dtype=t.dtype).set_(storage, 0, (storage.nbytes() // t.element_size(),), (1,))


@pytest.fixture
def poisoning(monkeypatch):
    monkeypatch.setattr(torch.utils.deterministic, "fill_uninitialized_memory", True)
    deterministic(True)
    yield
    deterministic(False)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int32, torch.bool])
def test_a_strided_allocation_is_poisoned_between_its_elements(poisoning, dtype):
    for _ in range(4):  # leave freed, non-poison data where the allocator will look next
        junk = torch.ones(4096, dtype=dtype)
        del junk
    with OpRecorder() as rec:
        x = torch.empty_strided((64, 2), (8, 1), dtype=dtype)  # 6 of every 8 elements are gaps
        y = x.new_empty_strided((3, 3), (5, 1))
    assert rec.ops["empty_strided"] == 1 and rec.ops["new_empty_strided"] == 1
    for t in (x, y):
        whole = _whole_storage(t)
        assert whole.numel() > t.numel()
        if dtype.is_floating_point:
            assert torch.isnan(whole.float()).all(), whole
        elif dtype is torch.bool:
            assert whole.all()
        else:
            assert (whole == torch.iinfo(dtype).max).all(), whole


def test_nothing_is_poisoned_outside_candidate_calls():
    x = torch.zeros(8)
    poison_storage(x)  # deterministic algorithms are off: the judge's own tensors are left alone
    assert (x == 0).all()


def test_the_poisoning_is_neither_the_candidates_op_nor_a_step_of_its_plan(poisoning):
    """The worker records a CUDA forward's plan under both modes (``worker._call_candidate``: the op
    recorder entered first): the fill runs inside the recorder's own dispatch, seen by neither."""
    from hawkeye_env.judge.sandboxed.candidate.plan_recorder import PlanRecorder

    plan = PlanRecorder([torch.randn(4)], {}, device="cpu")
    with OpRecorder() as rec, plan:
        x = torch.empty_strided((2, 2), (4, 1))
    assert torch.isnan(_whole_storage(x)).all()
    assert set(rec.ops) <= {"empty_strided", "detach"} and rec.ops["empty_strided"] == 1, rec.ops
    assert [s.get("op") for s in plan.steps if s.get("op") != "aten::detach"] == ["aten::empty_strided"]
