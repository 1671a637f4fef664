"""Rewards computed from a judge :class:`~hawkeye_env.judge.verdict.Verdict`; the current one is v2."""

from reward.v2 import REWARD_VERSION, reward

__all__ = ["REWARD_VERSION", "reward"]
