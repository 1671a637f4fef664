"""UNTRUSTED: the only subtree that imports candidate code. The worker imports the candidate's
module, runs its forward once per planned shape and layout with guards around it (``guards``,
``poison``, ``dispatch_mode``, ``launch_values``), and records the launch plan (``plan_recorder``;
on CPU ``interpreter_recorder``: kernels as source, launches on an empty grid). What it reports is
data the parent validates; nothing it computes is trusted.
"""
