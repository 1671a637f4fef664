"""The one place a verdict is finished: its reward under the current reward version, then the
feedback text (which quotes the reward). The evaluator, the Ray backend, the env and the training
reward all finish verdicts here, so a verdict's reward and feedback never depend on who judged it."""

from __future__ import annotations

from hawkeye_env.judge.parent.decide.feedback import render_feedback
from hawkeye_env.judge.parent.versions import software_versions
from hawkeye_env.judge.shared.verdict import Stage, Verdict
from reward import REWARD_VERSION, reward


def finish_verdict(verdict: Verdict) -> Verdict:
    """Set ``verdict``'s ``reward``, ``reward_version`` and ``feedback`` in place; returns it."""
    verdict.reward = reward(verdict)
    verdict.reward_version = REWARD_VERSION
    verdict.feedback = render_feedback(verdict)
    return verdict


def no_source_verdict(task: str, device: str, why: str) -> Verdict:
    """The finished ``no_source`` verdict of text that yields no candidate source (nothing runs,
    nothing is stored): what the env and the training reward give such an action."""
    return finish_verdict(Verdict(task=task, device=device, stage=Stage.NO_SOURCE, versions=software_versions(device),
                                  error=f"The action could not be turned into source: {why}"))


__all__ = ["finish_verdict", "no_source_verdict"]
