"""The units' infrastructure, apart from the units: the ``Unit`` record (``spec``), the taxonomy
and the prompt's unit context (``index``), the verifier (``harness``, run under the judge's rules by
``python -m hawkeye_env.units_verify``), input builders several units share (``inputs``) and the sm_90
cross-compile checks (``triton_compile``, ``gluon_compile``). Nothing here is a kernel a candidate
may import: the kernel modules several units share stay at the top of ``units/``."""
