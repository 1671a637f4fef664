"""Rewards computed from a judge :class:`~hawkeye_env.judge.shared.verdict.Verdict`: every version in
one module (``reward/score.py``, with its table and version history); the current one is v4."""

from reward.score import REWARD_VERSION, REWARDS, reward

__all__ = ["REWARD_VERSION", "REWARDS", "reward"]
