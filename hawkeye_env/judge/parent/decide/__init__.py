"""Deciding a verdict from checked data: float64 and native references (``references``), the
comparison (``checks``, ``correctness``, where and under which lock in ``comparing``), the stale
hypothesis (``stale``), errors judged by structure (``structure``), stalls (``stall``), KernelBench's
own protocol (``kernelbench_protocol``), the roofline floor (``roofline``), and the reward and
feedback set in one place (``finish``, ``feedback``).
"""
