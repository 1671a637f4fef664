"""Attention forward: ``softmax(q k^T * scale [+ soft-cap] [+ mask]) v`` with grouped-query heads
(``Hq = HKV * G``, query head ``h`` reading key/value head ``h // G``), full or causal, a causal
sliding window of ``W`` keys (Mistral), tanh soft-capping of the scores (Gemma 2: ``CAP *
tanh(s / CAP)``), and a decode form (one query per sequence against ``S`` keys).

The reference is the explicit form in float32 (float64 in the judge's exact run), the tolerance
``spec.ATTENTION_BF16`` for bfloat16 outputs (every bf16 implementation rounds the softmax weights
before ``P @ V``).
"""

from __future__ import annotations

import random

from hawkeye_env.tasks.generate.dims import draw_shapes
from hawkeye_env.tasks.generate.draft import TaskDraft, TensorArg
from hawkeye_env.tasks.generate.families.common import draw_layouts, wrap_precision

CAPS = (20.0, 30.0, 50.0)
MASKS = ("full", "causal", "window")


def _workset(s: dict) -> float:
    q_len = s.get("SQ", s["S"])
    heads = s["B"] * s["HKV"] * s["G"]
    return 4.0 * heads * (2 * q_len * s["S"] + 3 * s["S"] * s["D"])


def _visible(mask: str, decode: bool) -> str:
    """Query-key pairs that are not masked, per head (a FLOP count's factor)."""
    if decode:
        return "S"
    if mask == "causal":
        return "S * (S + 1) / 2"
    if mask == "window":
        return "(min(W, S) * (min(W, S) + 1) / 2 + max(S - W, 0) * W)"
    return "S * S"


def draw_attention(rng: random.Random) -> TaskDraft:
    dtype = rng.choice(("bfloat16", "bfloat16", "float32"))
    decode = rng.random() < 0.25
    mask = "full" if decode else rng.choice(MASKS)
    softcap = rng.random() < 0.3
    roles = {"B": "batch", "HKV": "kv_heads", "G": "group", "S": "seq", "D": "head_dim"}
    if mask == "window":
        roles["W"] = "window"
    q_len = "1" if decode else "S"
    inputs = (TensorArg("q", ("B", "HKV * G", q_len, "D"), dtype), TensorArg("k", ("B", "HKV", "S", "D"), dtype),
              TensorArg("v", ("B", "HKV", "S", "D"), dtype))
    body = ["k = k.repeat_interleave(q.shape[1] // k.shape[1], dim=1)",
            "v = v.repeat_interleave(q.shape[1] // v.shape[1], dim=1)",
            "s = (q @ k.transpose(-1, -2)) * q.shape[-1] ** -0.5"]
    constants = {}
    if softcap:
        constants["CAP"] = rng.choice(CAPS)
        body.append("s = CAP * torch.tanh(s / CAP)")
    if mask != "full":
        body += ["i = torch.arange(s.shape[-2], device=s.device)[:, None]",
                 "j = torch.arange(s.shape[-1], device=s.device)[None, :]",
                 "keep = (j <= i) & (j > i - self.window)" if mask == "window" else "keep = j <= i",
                 's = s.masked_fill(~keep, float("-inf"))']
    body.append("h = torch.softmax(s, dim=-1) @ v")
    lines, helpers = wrap_precision(body, dtype, "h", ["q", "k", "v"], start="")
    gpu, cpu = draw_shapes(rng, roles, _workset)
    stem = "_".join(x for x in ("attn", "decode" if decode else mask, "gqa" if gpu["G"] > 1 else "",
                                "softcap" if softcap else "") if x)
    hint = ("Flash attention: tile keys, keep a running max and sum per query row, map query head h to "
            "key/value head h // G in the index arithmetic (never copy K/V per query head)")
    hint += {"causal": "; skip key blocks above the diagonal", "window": "; visit only the W keys of each window",
             "full": ""}[mask]
    if decode:
        hint = ("Decode attention: one query row per head against S keys; split the keys across programs "
                "(split-K) and combine the partial softmaxes")
    return TaskDraft(
        stem=stem, family="attention", dtype=dtype,
        summary=(f"{'Decode' if decode else mask.capitalize()} attention with grouped-query heads "
                 f"(Hq = HKV * G){', tanh soft-capped scores' if softcap else ''}"),
        inputs=inputs, init_keys=("W",) if mask == "window" else (),
        init_lines=("self.window = W",) if mask == "window" else (), body=tuple(lines), out_dtype=dtype,
        out_shape=("B", "HKV * G", q_len, "D"), gpu_shape=gpu, cpu_shapes=cpu,
        flops=f"4.0 * B * HKV * G * D * {_visible(mask, decode)}",
        tags=("online_softmax", "attention") + (("split_k",) if decode else ()), hint=hint,
        tolerance="ATTENTION_BF16" if dtype == "bfloat16" else "", constants=constants, helpers=helpers,
        layouts=draw_layouts(rng, ("sliced", "offset")),
        graph=("attention", mask, str(decode), str(softcap)),
    )
