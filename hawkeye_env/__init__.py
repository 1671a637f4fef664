"""hawkeye-env: a trustworthy judge for LLM-written Triton kernels and its Gymnasium environment."""

from hawkeye_env.registration import register_envs

register_envs()
