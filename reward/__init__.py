"""Rewards computed from a judge :class:`~hawkeye_env.judge.verdict.Verdict`; the current one is v3."""

from reward.v3 import REWARD_VERSION, reward

__all__ = ["REWARD_VERSION", "reward"]
