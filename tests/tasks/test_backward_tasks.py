"""The curated backward tasks: the attention task's saved forward (``o``, ``lse``) always belongs
to the trial's q, k, v, each task's tolerance rejects its expert with one term of the backward
dropped (the judge's ``compare`` on the expert's kernels edited in one line), and the attention
task accepts FlashAttention-2's ``delta = rowsum(o * grad_out)`` from the saved bf16 ``o``."""

from __future__ import annotations

import importlib.util

import pytest
import torch

from bench.native_excuse import native_multiple, o_delta_source
from hawkeye_env.judge.parent.decide import structure
from hawkeye_env.judge.parent.decide.correctness import compare, dtype_name
from hawkeye_env.judge.shared.inputs import draw_like, make_inputs, refill
from hawkeye_env.tasks.registry import get_task, task_module

ATTENTION = "attention_causal_bwd_bf16"
SHAPE = {"attention_causal_bwd_bf16": {"B": 1, "H": 2, "S": 67, "D": 16},
         "simple_gla_bwd_bf16": {"B": 1, "H": 2, "T": 67, "D": 16},
         "gla_bwd_bf16": {"B": 1, "H": 2, "T": 67, "D": 16}}
# Each expert with one term of its backward dropped: the lines edited, and what replaces them.
NO_DELTA = ("        b_ds = b_p * (tl.dot(b_do, tl.trans(b_v)) - b_delta[:, None])\n        b_dk",
            "        b_ds = b_p * tl.dot(b_do, tl.trans(b_v))\n        b_dk")
KV_FROM_DIAGONAL = ("range((start_n // BLOCK_M) * BLOCK_M, S, BLOCK_M)", "range(0, S, BLOCK_M)")
KV_MASKED = ("_probs(b_q, b_k, b_lse2, offs_m, offs_n, S, qk_scale)  # [BLOCK_M, BLOCK_N]\n        b_dv",
             "tl.exp2(tl.dot(b_q, tl.trans(b_k)) * qk_scale - b_lse2[:, None])\n        b_dv")
GLA_DK_STATE = ("b_dk = tl.dot(tl.trans(b_ds), b_q) + tl.dot(b_v, tl.trans(b_dH).to(b_v.dtype)) * b_tail",
                "b_dk = tl.dot(tl.trans(b_ds), b_q)")
VECTOR_GLA_DK_STATE = ("b_dk += tl.dot(b_v, tl.trans(b_dH).to(b_v.dtype)) * tl.exp(b_G_last[None, :] - b_G)",
                      "b_dk += 0.0 * b_G")
EDITS = {
    "no_delta": (ATTENTION, (NO_DELTA,)),
    "non_causal_dk_dv": (ATTENTION, (KV_FROM_DIAGONAL, KV_MASKED)),
    "no_state_in_dk": ("simple_gla_bwd_bf16", (GLA_DK_STATE,)),
    "no_logsigmoid_chain_rule": ("simple_gla_bwd_bf16", (("b_dg / (1.0 + tl.exp(b_y))", "b_dg + 0.0 * b_y"),)),
    "gla_no_state_in_dk": ("gla_bwd_bf16", (VECTOR_GLA_DK_STATE,)),
    "gla_no_logsigmoid_chain_rule": ("gla_bwd_bf16", (("/ (1.0 + tl.exp(b_y))", "+ 0.0 * b_y"),)),
}


def _solution(task_id: str, tmp_path, edits: tuple = (), source: str | None = None):
    spec = get_task(task_id)
    source = source or open(importlib.util.find_spec(spec.solution).origin).read()
    for old, new in edits:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    path = tmp_path / f"{task_id}_variant.py"
    path.write_text(source)
    loaded = importlib.util.spec_from_file_location(f"variant_{task_id}_{tmp_path.name}", path)
    module = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(module)
    return module.ModelNew()


def _outputs(task_id: str, model, seed: int = 0, distribution: str = "normal",
             shape: dict | None = None) -> list[tuple]:
    """``(output, float64 reference, native reference)`` of each output of ``model`` on one trial."""
    from hawkeye_env.judge.sandboxed.common.interpreter.fixes import install_interpreter_fixes

    install_interpreter_fixes()
    module = task_module(get_task(task_id))
    inputs = make_inputs(module, shape or SHAPE[task_id], distribution, seed, "cpu")
    with torch.no_grad():
        natives = module.Model()(*inputs)
        refs = module.Model().double()(*[x.double() for x in inputs])
        outs = model(*inputs) if model is not None else _flash_backward(*inputs, delta_from_o=True)
    return list(zip(outs, refs, natives, strict=True))


def _judged(task_id: str, outputs: list[tuple]) -> list[bool]:
    tol = get_task(task_id).tolerance
    return [compare(o, r, n.dtype, tol(dtype_name(n.dtype)), native=n)["ok"] for o, r, n in outputs]


def _verdicts(task_id: str, model, seed: int = 0, distribution: str = "normal") -> list[bool]:
    return _judged(task_id, _outputs(task_id, model, seed, distribution))


def test_the_saved_forward_belongs_to_the_trial_and_its_refills():
    module = task_module(get_task(ATTENTION))
    shape = {"B": 1, "H": 2, "S": 37, "D": 16}
    inputs = module.draw_inputs(shape, "uniform", 3, "cpu", draw_like)
    generator = torch.Generator().manual_seed(1)
    for _ in range(2):
        q, k, v, o, lse, _ = inputs
        scores = (q.double() @ k.double().transpose(-1, -2)) * 16 ** -0.5
        scores = scores.masked_fill(~torch.ones(37, 37, dtype=torch.bool).tril(), float("-inf"))
        torch.testing.assert_close(lse.double(), torch.logsumexp(scores, -1), rtol=1e-5, atol=1e-5)
        expected = torch.softmax(scores, -1) @ v.double()
        torch.testing.assert_close(o.double(), expected, rtol=2 ** -7, atol=2 ** -7)
        before = q.clone()
        refill(inputs, generator)
        assert not torch.equal(before, inputs[0])


@pytest.mark.parametrize("task_id", sorted(SHAPE))
def test_the_expert_passes_the_tolerance(task_id, tmp_path):
    assert all(_verdicts(task_id, _solution(task_id, tmp_path)))


@pytest.mark.parametrize("distribution", ["normal", "heavy_tailed"])
def test_the_expert_with_delta_from_the_bf16_output_passes_by_the_natives_excuse(distribution, tmp_path):
    """Seed 1 holds dq rows over one or two dominant keys, near zero, where rounding ``o`` shifts
    the whole row: the native reference (``task.py``) makes the same error there, so the
    concentration rule excuses it (``structure.excused``); without the excuse it fails."""
    outputs = _outputs(ATTENTION, _solution(ATTENTION, tmp_path, source=o_delta_source()), 1, distribution)
    assert all(_judged(ATTENTION, outputs))
    with native_multiple(0.0):
        assert not all(_judged(ATTENTION, outputs))


def test_the_gla_gate_gradient_stays_within_its_bound_over_many_chunks(tmp_path):
    """The GLA expert takes the later chunks' share of the gate gradient as ``rowsum(S * dH)``; a
    float32 carry of ``q * dq - k * dk`` over them is the same sum in exact arithmetic, but its
    rounding grows with T (relative L2 1.6e-2 against the 1.2e-2 bound here, 16 chunks)."""
    shape = {"B": 1, "H": 1, "T": 1024, "D": 16}
    outputs = _outputs("gla_bwd_bf16", _solution("gla_bwd_bf16", tmp_path), 1, "normal", shape)
    assert all(_judged("gla_bwd_bf16", outputs))


@pytest.mark.parametrize("name", sorted(EDITS))
def test_a_backward_with_one_term_wrong_fails(name, tmp_path):
    task_id, edits = EDITS[name]
    assert not all(_verdicts(task_id, _solution(task_id, tmp_path, edits)))


def _flash_backward(q, k, v, o, lse, grad_out, delta_from_o: bool):
    """FlashAttention-2's backward maths in PyTorch, rounded where a bf16 kernel rounds (P and dS
    as MMA operands, float32 accumulation); ``delta`` from the saved bf16 ``o`` or from P and dP."""
    s, d = q.shape[-2:]
    qf, kf, vf, dof = (x.float() for x in (q, k, v, grad_out))
    visible = torch.ones(s, s, dtype=torch.bool).tril()
    p = torch.where(visible, ((qf @ kf.transpose(-1, -2)) * d ** -0.5 - lse[..., None]).exp(), 0.0)
    dp = dof @ vf.transpose(-1, -2)
    delta = (o.float() * dof).sum(-1) if delta_from_o else (p * dp).sum(-1)
    ds = (p * (dp - delta[..., None])).bfloat16().float()
    dv = p.bfloat16().float().transpose(-1, -2) @ dof
    return [(ds @ kf * d ** -0.5).bfloat16(), (ds.transpose(-1, -2) @ qf * d ** -0.5).bfloat16(), dv.bfloat16()]


def test_delta_from_the_bf16_output_and_from_p_and_dp_both_pass_where_fp8_fails():
    """On uniform inputs (nonzero mean, so dP - delta cancels) at S=256, D=64 the bf16 rounding of
    ``o`` costs dq the most; the native reference computes delta from ``o`` too, so the bound
    admits it. The same answers rounded to fp8 fail dk and dv there, and all three outputs on
    normal inputs: dq's bound on uniform inputs is 4x the native's own rounding error (relative
    L2 about 1e-2), which fp8 output rounding stays under, so a verdict's normal and heavy-tailed
    trials are what reject an fp8 dq."""
    module = task_module(get_task(ATTENTION))
    tol = get_task(ATTENTION).tolerance("bfloat16")
    for distribution, fp8_fails in (("uniform", [False, True, True]), ("normal", [True, True, True])):
        inputs = module.draw_inputs({"B": 1, "H": 1, "S": 256, "D": 64}, distribution, 0, "cpu", draw_like)
        with torch.no_grad():
            natives = module.Model()(*inputs)
            refs = module.Model().double()(*[x.double() for x in inputs])
        for from_o in (True, False):
            outs = _flash_backward(*inputs, delta_from_o=from_o)
            assert all(compare(o, r, n.dtype, tol, native=n)["ok"] for o, r, n in zip(outs, refs, natives)), from_o
            fp8 = [o.to(torch.float8_e4m3fn).bfloat16() for o in outs]
            failed = [not compare(o, r, n.dtype, tol, native=n)["ok"] for o, r, n in zip(fp8, refs, natives)]
            assert all(f for f, must in zip(failed, fp8_fails) if must), (distribution, from_o, failed)


@pytest.mark.parametrize(("seed", "distribution", "index"), [(1, "normal", 0), (23, "heavy_tailed", 1)])
def test_the_natives_excuse_covers_its_own_error_and_nothing_larger_or_elsewhere(seed, distribution, index):
    """The emulated o-delta backward's output that fails the concentration rule without the excuse
    (dq at seed 1, dk at heavy-tailed seed 23) passes with it; the same output with the native's
    own error on the excused slice tripled fails, and so does the output judged against a native
    reference that does not break the rule on that slice (its error there removed)."""
    out, ref, nat = _outputs(ATTENTION, None, seed, distribution)[index]
    tol = get_task(ATTENTION).tolerance("bfloat16")
    assert compare(out, ref, nat.dtype, tol, native=nat)["ok"]
    with native_multiple(0.0):
        plain = compare(out, ref, nat.dtype, tol, native=nat, label="output 0")
    assert not plain["ok"] and "an error concentrated in one index set" in plain["reason"]
    name = plain["reason"].split(" of output 0")[0]
    r, o, n = ref.double(), out.double(), nat.double()
    rms = r.pow(2).mean().sqrt()
    unit = tol.atol * torch.maximum(r.pow(2).mean(-1, keepdim=True).sqrt(), rms) + tol.rtol * r.abs()
    found = structure.concentrated((o - r).abs() / unit)
    assert found.name == name and found.score > 1
    tripled = o.clone()
    tripled[found.selector] = r[found.selector] + 3 * (n - r)[found.selector]
    c = compare(tripled.bfloat16(), ref, nat.dtype, tol, native=nat, label="output 0")
    assert not c["ok"] and c["reason"].startswith(name), c["reason"]
    unbroken = n.clone()
    unbroken[found.selector] = r[found.selector].bfloat16().double()
    c = compare(out, ref, nat.dtype, tol, native=unbroken.bfloat16(), label="output 0")
    assert not c["ok"] and c["reason"].startswith(name), c["reason"]
