"""TRUSTED: the baseline-only worker (``serve``): the judge's eager and ``torch.compile`` baselines
and the task's vendor libraries, timed with no candidate code in the process.
"""
