"""Names and messages every side of the baselines shares: the judge's own baselines, the KernelBench
protocol's baseline, and how an unavailability reason is shortened."""

from __future__ import annotations

JUDGE_BASELINES = ("eager", "compile")
# Timed only when a verdict also judges KernelBench's protocol: the reference run eagerly and timed
# as KernelBench times it (``back_to_back.py``: back-to-back calls on fixed inputs, the host launch
# inside the events), so the protocol's mean time is compared with a baseline measured the same way.
# Its stored ``median_ms`` is that method's statistic, the mean. Never one of our speedups.
KERNELBENCH_EAGER = "kernelbench_eager"
# Unavailability reasons reach the agent's feedback; exception texts can be pages long.
MAX_REASON_CHARS = 300


def short_reason(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= MAX_REASON_CHARS else text[: MAX_REASON_CHARS - 3] + "..."
