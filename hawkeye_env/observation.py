"""The observation of ``hawkeye/KernelOpt-v3``: task text, unit context, prompt and chat messages.

Everything an agent reads is built here, so LLM policies and the env share one prompt. The
templates are module constants; ``build_messages`` renders them, and ``make_observation`` turns the
pieces into the env's observation dict, every string sanitized into ``text_space``.

Text spaces: Gymnasium's ``Text`` checks each character against a charset and a max length. The
charset is ``CHARSET``: printable ASCII and its whitespace (``string.printable``: space, ``\\t``,
``\\n``, ``\\r``, ``\\x0b``, ``\\x0c``) plus ``EXTRA_CHARS``, the typographic and maths characters our
docs use. ``sanitize`` writes any other character the way Python's ``ascii()`` does (``\\xNN``,
``\\uNNNN``, ``\\UNNNNNNNN``) and cuts text longer than the limit in the middle, leaving
``TRUNCATION_MARKER`` there. Example::

    >>> sanitize("naïve\\x00", 1000)
    'na\\\\xefve\\\\x00'
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Mapping
from importlib.util import find_spec
from pathlib import Path

import numpy as np

from hawkeye_env.tasks.spec import TaskSpec

#: Non-ASCII characters kept as they are: dashes, quotes, ellipsis, maths symbols, Greek letters.
EXTRA_CHARS = "—–‘’“”…×÷±≤≥≈≠→←√∞µ²³·°αβγδεηθλμπρστφωΔΣ"
CHARSET = frozenset(string.printable + EXTRA_CHARS)
#: Longest observation string (characters). 200k characters are ~50k tokens: room for the largest
#: unit context (``full`` mode), a long kernel and a long traceback.
MAX_TEXT_CHARS = 200_000
TRUNCATION_MARKER = "\n[... {n} characters cut by the env ...]\n"
#: Unit context budget in characters (~3k tokens), the one default of the env, the evals, every
#: training recipe and every adapter. Measured on the 28-task suite (2026-12-01): the whole ``docs``
#: context of 14 tasks fits; the GEMM family's 37,560 characters are cut to its most relevant units
#: (``gemm_bf16``: 10,483), which leaves most of a 16k-token window to the task, source and reply.
CONTEXT_BUDGET_CHARS = 12_000

_OUTSIDE = re.compile("[^" + "".join(re.escape(c) for c in sorted(CHARSET)) + "]")


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def sanitize(text: str, max_length: int = MAX_TEXT_CHARS) -> str:
    """``text`` with characters outside ``CHARSET`` escaped and, if too long, its middle cut.

    The result is always in ``Text(max_length, min_length=0, charset=CHARSET)``. The head and the
    tail are kept (feedback ends with the error, source begins with imports).
    """
    text = _OUTSIDE.sub(_escape, text)
    if len(text) <= max_length:
        return text
    keep = max(0, max_length - len(TRUNCATION_MARKER.format(n=len(text))))
    head = keep - keep // 3
    marker = TRUNCATION_MARKER.format(n=len(text) - keep)
    return (text[:head] + marker + text[len(text) - (keep - head):])[:max_length]


SYSTEM_PROMPT = """\
You are an expert GPU kernel engineer. You replace a PyTorch reference with a faster Triton \
implementation and reply in the exact format requested.

The candidate contract (the judge enforces every line):
- Define `class ModelNew(nn.Module)` with the same constructor arguments and outputs as `Model`; its
  parameters and buffers include the reference's names and shapes (the judge loads the reference's
  randomised weights into it).
- The main work runs in Triton kernels (your own, or unit solution kernels imported from `units`);
  host code only allocates, takes views and launches. Torch ops allowed at run time are listed in
  the task.
- Imports: torch, torch.nn, torch.nn.functional, triton, triton.language (and its `extra`
  libdevice), triton.tools.tensor_descriptor, math, typing, dataclasses and units. Nothing else.
- Kernels are module-level functions with `@triton.jit` (or Gluon's `@gluon.jit`) as the innermost
  decorator (only `triton.autotune(...)`/`triton.heuristics(...)` above it) and no nested `def`; the
  source is UTF-8 with no other coding declaration; forward reads no tensor data on the host.
- A kernel only computes on its arguments and writes tensors: no raise/try/with/f-strings/lambda,
  no stores to subscripts or attributes, no str/print, no torch calls, no module-level lists or
  objects (constants, imports and kernels only), parameter defaults constant; launch it with
  tensors, numbers, dtypes and Triton objects holding only those (no functions, no autotuned kernels).
- No threads, processes, streams, caches across calls, global/nonlocal state or reflection. Your
  classes are only called, read attributes of, tested with isinstance or named as bases (never
  aliased, decorated or passed as values); their bases are nn.Module or your own classes; no
  classmethods; methods are not used as values in a class body; assign only self's own attributes
  (self.x = v, never self.x.y = v); torch.tensor/as_tensor take only numbers, tensors and plain
  lists or tuples of them.
- Outputs are checked in float64 against the reference on several shapes (odd sizes included) and
  input distributions (normal, uniform, heavy-tailed). On a GPU the kernel is timed against eager
  PyTorch and torch.compile; the reward rises with the speedup over the faster of the two."""

TASK_TEMPLATE = """\
# Task {id} ({family})
{description}

Dtypes: {dtypes}
Shapes checked for correctness on CPU: {cpu_shapes}
Shapes checked on the GPU (the first one is timed): {gpu_shapes}
Device: {device}
Baseline times: {baselines}
Torch ops allowed at run time: {allowed_ops}
Tolerances (float64 comparison): {tolerances}

## Reference (module `{module}`)
```python
{reference}```"""

UNITS_TEMPLATE = """\
## Units (context `{mode}`): expert kernels you can read, call or splice
{units}"""

SOURCE_TEMPLATE = """\
## Current source (after turn {turn} of {max_turns})
```python
{source}```"""

NO_SOURCE_TEXT = "## Current source\nNone yet: write the whole module."

FEEDBACK_TEMPLATE = """\
## Judge feedback on the last attempt
{feedback}"""

REPLY_FORMAT = """\
## Reply format
Reply with exactly ONE of:
1. the whole module in a single fenced block:
```python
<complete source defining class ModelNew>
```
2. (only when a current source is shown) one or more SEARCH/REPLACE blocks, each copying whole lines
   of the current source exactly, including indentation:
<<<<<<< SEARCH
<exact lines of the current source>
=======
<new lines>
>>>>>>> REPLACE"""


def reference_source(spec: TaskSpec) -> str:
    """Source text of the task's KernelBench-style module (``Model``, ``get_inputs``, ``SPEC``)."""
    return Path(find_spec(spec.module).origin).read_text(encoding="utf-8")


def render_task(spec: TaskSpec, device: str, gpu: str = "", baselines_ms: Mapping[str, float] | None = None) -> str:
    """The task text: description, reference source, shapes, dtypes, device and baseline times.

    ``baselines_ms`` maps baseline name to its median time at the first GPU shape (from a timed
    verdict); on CPU there are none, since CPU verdicts are untimed.
    """
    if baselines_ms:
        baselines = ", ".join(f"{name} {ms:.4f} ms" for name, ms in sorted(baselines_ms.items()))
    elif device == "cpu":
        baselines = "none (CPU verdicts are untimed)"
    else:
        baselines = "not known yet (they appear after the first timed verdict)"
    where = f"cuda ({gpu})" if device == "cuda" else "cpu (Triton interpreter: correctness only, untimed)"
    tolerances = "; ".join(f"{d}: {t.describe()}" for d, t in spec.tolerances.items())
    return TASK_TEMPLATE.format(
        id=spec.id, family=spec.family, description=spec.description, dtypes=", ".join(spec.dtypes),
        cpu_shapes=", ".join(str(dict(s)) for s in spec.cpu_shapes),
        gpu_shapes=", ".join(str(dict(s)) for s in spec.gpu_shapes), device=where, baselines=baselines,
        allowed_ops=", ".join(sorted(spec.allowed_ops)), tolerances=tolerances, module=spec.module,
        reference=reference_source(spec),
    )


def turn_sections(source: str, feedback: str, turn: int, max_turns: int) -> str:
    """The part of a turn's prompt that changes from turn to turn: the current source (or that
    there is none) and the judge's feedback on the last attempt. ``build_messages`` puts it between
    the task and the reply format; the multi-turn training tool (``training/tool_env.py``) returns
    the same text as its reply, so a model sees one turn format in the env, the evals and training."""
    if source:
        body = source if source.endswith("\n") else source + "\n"
        parts = [SOURCE_TEMPLATE.format(source=body, turn=turn, max_turns=max_turns)]
    else:
        parts = [NO_SOURCE_TEXT]
    if feedback:
        parts.append(FEEDBACK_TEMPLATE.format(feedback=feedback))
    return "\n\n".join(parts)


def build_messages(
    task: str, units: str, source: str, feedback: str, context: str = "docs", turn: int = 0, max_turns: int = 4,
    reply_options: str = "",
) -> list[dict[str, str]]:
    """Chat messages ``[system, user]``: the contract, then task, units, source, feedback, reply format
    (with ``reply_options`` appended: the profile action's, ``profile_action.REPLY_OPTION``)."""
    parts = [task]
    if units:
        parts.append(UNITS_TEMPLATE.format(mode=context, units=units))
    parts.append(turn_sections(source, feedback, turn, max_turns))
    parts.append(REPLY_FORMAT + ("\n" + reply_options if reply_options else ""))
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": "\n\n".join(parts)}]


def prompt_text(messages: list[dict[str, str]]) -> str:
    """The messages as one prompt: system text, a blank line, user text."""
    return "\n\n".join(m["content"] for m in messages)


def messages_json(messages: list[dict[str, str]], max_length: int = MAX_TEXT_CHARS) -> str:
    """``messages`` as JSON text of at most ``max_length`` characters, still valid JSON.

    Each content must already be sanitized; if the JSON is too long, the user content is cut
    (with the marker) until it fits.
    """
    messages = [dict(m) for m in messages]
    text = json.dumps(messages, ensure_ascii=False)
    while len(text) > max_length:
        user = messages[-1]["content"]
        excess = len(text) - max_length
        messages[-1]["content"] = sanitize(user, max(0, len(user) - excess - len(TRUNCATION_MARKER) - 64))
        text = json.dumps(messages, ensure_ascii=False)
        if not messages[-1]["content"]:
            break
    return text


def make_observation(
    task: str, units: str, source: str, feedback: str, *, context: str, turn: int, max_turns: int,
    best_speedup: float, max_length: int = MAX_TEXT_CHARS, reply_options: str = "",
) -> dict:
    """The env's observation dict; every string is sanitized into ``text_space(max_length)``."""
    task, units, source, feedback = (sanitize(t, max_length) for t in (task, units, source, feedback))
    messages = build_messages(task, units, source, feedback, context, turn, max_turns, reply_options)
    return {
        "task": task,
        "units": units,
        "source": source,
        "feedback": feedback,
        "prompt": sanitize(prompt_text(messages), max_length),
        "messages": messages_json(messages, max_length),
        "turn": np.int64(turn),
        "best_speedup": np.array([best_speedup], dtype=np.float32),
    }


__all__ = [
    "CHARSET", "CONTEXT_BUDGET_CHARS", "EXTRA_CHARS", "FEEDBACK_TEMPLATE", "MAX_TEXT_CHARS", "NO_SOURCE_TEXT",
    "REPLY_FORMAT", "SOURCE_TEMPLATE", "SYSTEM_PROMPT", "TASK_TEMPLATE", "TRUNCATION_MARKER", "UNITS_TEMPLATE",
    "build_messages", "make_observation", "messages_json", "prompt_text", "reference_source", "render_task",
    "sanitize", "turn_sections",
]
