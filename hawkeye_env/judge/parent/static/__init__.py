"""Static checks, run in the parent. On a candidate's source only ``rules.fast_filter`` (a source that
names neither Triton nor a unit is certainly not a kernel solution); no trust rests on it. On the
kernel modules the parent writes from a CPU plan, the full rules (``rules.check_kernel_module``): a
kernel body may do what Triton's compiler accepts, because the CPU replay runs those bodies as
Python. ``walker`` walks a tree with ``syntax``, ``classes``, ``scopes``, ``modules``, the lists in
``allowlist`` and ``foreign``; ``kernel_text`` and ``kernel_bodies`` hold the kernel-level rules.
"""
