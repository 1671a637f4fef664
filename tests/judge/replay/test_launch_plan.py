"""The parent's validation of a recorded launch plan (``plan_check.plan_problem``): a plan
recorded from an honest forward passes, and each way a candidate could write one to reach outside
its own kernels is refused with its reason."""

from __future__ import annotations

import copy

import pytest
import torch

from hawkeye_env.judge.parent.validate import plan_check
from hawkeye_env.judge.sandboxed.candidate.plan_recorder import PlanRecorder
from hawkeye_env.judge.shared import launch_plan
from hawkeye_env.tasks.spec import ALLOCATION_AND_VIEW_OPS
from tests.judge.replay.fakes import compiled_kernel, elf, kernel_record

SIG = ["*fp32", "*fp32", "*fp32", "i32", "constexpr"]


def recorded() -> tuple[dict, list]:
    """An honest plan: allocate the output, one launch reading an input and a parameter, a view."""
    x, w = torch.randn(4, 8), torch.randn(8)
    with PlanRecorder([x], {"w": w}, device="cpu") as rec:
        out = torch.empty_like(x)
        rec.launch(compiled_kernel("mul", SIG), (4, 1, 1), (x, w, out, x.numel(), 128))
        res = out.t()
    return rec.plan([res]), rec.kernels


def problem(plan, kernels) -> str | None:
    return plan_check.plan_problem(plan, kernels, ALLOCATION_AND_VIEW_OPS)


def launch_step(plan) -> dict:
    return next(s for s in plan["steps"] if "launch" in s)


def test_an_honest_recorded_plan_passes():
    plan, kernels = recorded()
    assert problem(plan, kernels) is None
    assert [b["kind"] for b in plan["bases"]] == ["input", "param", "op"]


def test_libdevice_tables_in_a_cubin_are_accepted():
    """Triton's own cubins carry initialised device globals (libdevice tables) on the H200."""
    assert plan_check.cubin_problem(elf([".text.k", ".nv.global.init", ".nv.info"])) is None


def _mutate(edit):
    plan, kernels = recorded()
    plan, kernels = copy.deepcopy(plan), copy.deepcopy(kernels)
    edit(plan, kernels)
    return problem(plan, kernels)


@pytest.mark.parametrize("edit, reason", [
    (lambda p, k: launch_step(p)["args"].__setitem__(0, 140_000_000_000), "pointer argument is not a tensor"),
    (lambda p, k: p["steps"].insert(0, {"op": "aten::mm", "args": [], "kwargs": {}, "outs": []}),
     "outside the task's allowed ops"),
    (lambda p, k: p["steps"].insert(0, {"op": "aten::_local_scalar_dense", "args": [], "kwargs": {}, "outs": []}),
     "reads device data on the host"),
    (lambda p, k: k[0]["signature"].__setitem__(0, '*fp32"); system("id'), "unsupported argument type"),
    (lambda p, k: k[0]["signature"].__setitem__(3, "i128"), "unsupported argument type"),
    (lambda p, k: k[0].__setitem__("cubin", b"MZ" + b"\x00" * 100), "not a 64-bit little-endian ELF"),
    (lambda p, k: k[0].__setitem__("cubin", elf([".text"])[:70]), "out of bounds"),
    (lambda p, k: k[0].__setitem__("metadata", '{"name": "mul", "bad key": 1}'), "identifier keys"),
    (lambda p, k: k[0].__setitem__("metadata", k[0]["metadata"].replace('"mul"', '"other"')), "names another"),
    (lambda p, k: k[0].__setitem__("metadata", "not json"), "not JSON"),
    (lambda p, k: k[0].__setitem__("name", "mul; rm"), "bad name"),
    (lambda p, k: launch_step(p).__setitem__("grid", [-1, 1, 1]), "grid"),
    (lambda p, k: launch_step(p)["args"].pop(), "arguments for 5 parameters"),
    (lambda p, k: launch_step(p)["args"].__setitem__(4, 7), "constexpr argument"),
    (lambda p, k: launch_step(p)["args"].__setitem__(3, {"T": 0}), "integer"),
    (lambda p, k: launch_step(p).__setitem__("launch", 3), "names no kernel"),
    (lambda p, k: launch_step(p)["args"][0].__setitem__("T", 99), "not made before"),
    (lambda p, k: launch_step(p)["args"][0].__setitem__("dtype", "complex32"), "unknown dtype"),
    (lambda p, k: launch_step(p)["args"][0].__setitem__("size", [4, -8]), "bad size"),
    (lambda p, k: p["steps"].remove(launch_step(p)), "launches no kernel"),
    (lambda p, k: p["steps"].insert(0, launch_step(p)), "before the step that makes it"),
    (lambda p, k: p["bases"][2].__setitem__("step", 5), "does not say it makes"),
    (lambda p, k: p["bases"].append({"kind": "const", "device": "cuda", "nbytes": 4, "data": b"123"}),
     "bytes do not match"),
    (lambda p, k: p["bases"].append({"kind": "const", "device": "cuda", "nbytes": launch_plan.MAX_CONST_BYTES + 1,
                                     "data": bytes(launch_plan.MAX_CONST_BYTES + 1)}), "bytes of constants"),
    (lambda p, k: p["bases"].append({"kind": "file", "nbytes": 0}), "unknown kind"),
    (lambda p, k: p["outputs"].__setitem__(0, 3), "not a tensor"),
    (lambda p, k: p.__setitem__("outputs", []), "no outputs"),
    (lambda p, k: p.__setitem__("extra", 1), "not a dict of bases, steps and outputs"),
    (lambda p, k: p["steps"][0].__setitem__("op", "aten::empty_like.out; import os"), "not an aten operator"),
    (lambda p, k: p["steps"][0]["kwargs"].__setitem__("pin_memory", {"eval": "x"}), "unknown value tag"),
    (lambda p, k: p["steps"].extend([p["steps"][1]] * launch_plan.MAX_STEPS), "more than"),
])
def test_each_malformed_plan_is_refused_with_its_reason(edit, reason):
    found = _mutate(edit)
    assert found is not None and reason in found, found


def test_a_tensor_descriptor_argument_is_checked_like_a_tensor():
    plan, kernels = recorded()
    kernels[0]["signature"][0] = "tensordesc<fp32[64, 64]>"
    ref = launch_step(plan)["args"][0]
    desc = {"base": ref, "shape": [4, 8], "strides": [8, 1], "block_shape": [64, 64], "padding": "zero"}
    launch_step(plan)["args"][0] = {"desc": desc}
    assert problem(plan, kernels) is None
    desc["padding"] = "garbage"
    assert "padding" in problem(plan, kernels)


def test_plans_travel_through_the_replay_job_unchanged():
    plan, kernels = recorded()
    plan["bases"].append({"kind": "const", "device": "cpu", "nbytes": 3, "data": b"\x00\xffA"})
    entries = [{"shape": {"N": 4}, "layout": {"name": "sliced"}, "plan": plan, "kernels": kernels, "warm": warm}
               for warm in (False, True)]
    import json

    back = launch_plan.from_job(json.loads(json.dumps(launch_plan.to_job(entries))))
    assert back == entries


def test_a_kernel_record_from_the_fakes_is_well_formed():
    assert plan_check._kernel_problem(0, kernel_record("k", SIG)) is None
