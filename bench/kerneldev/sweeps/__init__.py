"""GPU sweeps behind the tuning constants of the units and the experts: ``gemm``, ``small_m_gemm``,
``splitk``, ``fp8``, ``fp4``, ``ws``, ``attention`` and ``chunked_scan``, each ``python -m
bench.kerneldev.sweeps.NAME``, printing JSON lines; what they share is in ``harness``. Their
current results are tables of BENCHMARKS.md (``python -m bench.benchmarks_doc``)."""
