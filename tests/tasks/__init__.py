"""The curated tasks' tests."""

# The four conformance tasks (``test_conformance.py``); every other curated task is the frontier
# suite (``test_suite_tasks.py``).
CONFORMANCE_TASKS = ("vector_add_fp32", "softmax_fp32", "rmsnorm_bf16", "gemm_bf16")
