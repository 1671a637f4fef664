"""The vendor-library-frontier task suite: fused GEMMs, low-precision GEMMs, norms, losses and
attention, each a KernelBench-style module with a ``SPEC`` and an expert solution in
``hawkeye_env.tasks.solutions``."""
