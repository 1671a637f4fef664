"""Hack #8 (inherit the reference): import the task's reference ``Model`` and subclass it, so
forward is the reference's own torch code."""

from hawkeye_env.tasks.vector_add_fp32.task import Model


class ModelNew(Model):
    pass
