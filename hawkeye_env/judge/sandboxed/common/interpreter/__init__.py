"""Triton's CPU interpreter made to run what a GPU runs: bf16 arithmetic (``cpu_backend``), call
forms (``calls``), autotune, heuristics and libdevice (``gaps``, ``libdevice``), what cannot be
checked on CPU (``not_checkable``), memory accesses within each launch's tensors (``bounds``), all
installed by ``fixes``. Used by the candidate worker and the CPU replay alike.
"""
