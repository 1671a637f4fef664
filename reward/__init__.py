"""Rewards computed from a judge :class:`~hawkeye_env.judge.verdict.Verdict`."""

from reward.v1 import REWARD_VERSION, reward

__all__ = ["REWARD_VERSION", "reward"]
