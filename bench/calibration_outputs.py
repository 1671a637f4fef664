"""What ``bench.calibrate`` and ``bench.recheck_trials`` judge on one planned trial: the expert's
module loaded from its source, its output, each vendor baseline's, and three outputs no honest
kernel produces (the reference at a lower precision, rows zeroed, elements zeroed)
(``trial_outputs``), each judged by the verdict's own trial check (``judge_output``)."""

from __future__ import annotations

import copy
import importlib.util
import sys
import tempfile
from pathlib import Path

import torch

from hawkeye_env.judge.parent.decide import checks, references
from hawkeye_env.judge.sandboxed.baseline.serve import prepare_vendor
from hawkeye_env.judge.shared.verdict import Stage, Verdict
from hawkeye_env.tasks.registry import task_module
from hawkeye_env.tasks.spec import TaskSpec

HACKS = ("lower_precision", "skip_rows_1pct", "skip_elements_0.1pct")

FP8 = getattr(torch, "float8_e4m3fn", None)


def load_solution(source: str, name: str):
    """``source`` imported as module ``name`` from a file of its own (a trusted expert solution,
    run in this process)."""
    folder = Path(tempfile.mkdtemp(prefix="hawkeye-calibrate-"))
    path = folder / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def lower_precision(ref: torch.nn.Module, inputs: list) -> list:
    """The reference at a lower precision than the task allows: fp32 in bf16, bf16 and fp16 with
    floating operands and weights rounded through fp8 e4m3; outputs cast back."""
    expected = [o.dtype for o in references.as_list(ref(*inputs))]
    low = torch.bfloat16 if expected[0] == torch.float32 else FP8

    def down(x):
        if not (isinstance(x, torch.Tensor) and x.is_floating_point()):
            return x
        return x.to(torch.bfloat16) if low == torch.bfloat16 else x.to(low).to(x.dtype)

    model = copy.deepcopy(ref)
    with torch.no_grad():
        for p in list(model.parameters()) + list(model.buffers()):
            if p.is_floating_point():
                p.copy_(down(p).to(p.dtype))
        if low == torch.bfloat16:
            model = model.to(torch.bfloat16)
        outs = references.as_list(model(*[down(x) for x in inputs]))
    return [o.to(d) for o, d in zip(outs, expected)]


def zero_rows(outs: list, fraction: float) -> list:
    """Outputs with the last ``fraction`` of their rows (first dimension after flattening the
    rest) set to zero: a kernel that skips work."""
    zeroed = []
    for o in outs:
        o = o.clone()
        flat = o.reshape(o.shape[0], -1) if o.dim() > 1 else o.reshape(-1, 1)
        n = max(1, int(round(fraction * flat.shape[0])))
        flat[-n:] = 0
        zeroed.append(o)
    return zeroed


def zero_elements(outs: list, fraction: float, seed: int) -> list:
    """Outputs with ``fraction`` of their elements (at least one; chosen by ``seed``) set to zero."""
    zeroed = []
    g = torch.Generator(device="cpu").manual_seed(seed)
    for o in outs:
        o = o.clone()
        flat = o.reshape(-1)
        n = max(1, int(fraction * flat.numel()))
        flat[torch.randperm(flat.numel(), generator=g)[:n].to(flat.device)] = 0
        zeroed.append(o)
    return zeroed


def trial_outputs(spec: TaskSpec, module, trial: dict, device: str) -> tuple[dict[str, list | None], dict]:
    """Outputs on ``trial`` of the expert (``module.ModelNew`` with the reference's state), of each
    vendor baseline (``"vendor:<name>"``, None where it cannot run) and of each of ``HACKS``, and
    why each vendor that cannot run cannot (``prepare_vendor``'s reason, "" where it runs)."""
    ref, inputs = references.build(spec, trial["shape"], trial["distribution"], trial["seed"], device)
    torch.manual_seed(trial["seed"])
    new = module.ModelNew(*task_module(spec).get_init_inputs(**trial["shape"]))
    new.load_state_dict(ref.state_dict(), strict=False)
    new = new.to(device)
    outputs: dict[str, list | None] = {}
    reasons: dict[str, str] = {}
    with torch.no_grad():
        outputs["expert"] = references.as_list(new(*inputs))
        for name, path in spec.vendor_baselines.items():
            fn, reasons[f"vendor:{name}"] = prepare_vendor(path, ref, inputs)
            outputs[f"vendor:{name}"] = references.as_list(fn(*inputs)) if fn is not None else None
        outputs["lower_precision"] = lower_precision(ref, inputs)
    outputs["skip_rows_1pct"] = zero_rows(outputs["expert"], 0.01)
    outputs["skip_elements_0.1pct"] = zero_elements(outputs["expert"], 0.001, trial["seed"])
    return outputs, reasons


def judge_output(spec: TaskSpec, trial: dict, outs: list, got: references.TrialReferences,
                 device: str) -> tuple[bool, Verdict]:
    """Whether ``outs`` pass ``trial`` by ``checks.check_trials`` against the parent's references
    ``got`` (``references.trial_references``), and the verdict that check filled."""
    row = {"outputs": [o.detach() for o in outs], "reference": got.reference, "native": got.native,
           "expected_dtypes": [str(o.dtype).removeprefix("torch.") for o in got.native]}
    v = Verdict(task=spec.id, device=device, stage=Stage.CORRECT)
    return checks.check_trials(spec, [trial], [row], v, device), v


__all__ = ["HACKS", "judge_output", "load_solution", "lower_precision", "trial_outputs", "zero_elements",
           "zero_rows"]
