"""The OS boundary, from the parent's side: the sandbox's policy and ``bwrap`` command line
(``isolation``), starting sandboxed processes (``spawn``, ``start``, ``forkserver``, ``standby``),
one job in a worker watched to its end (``run_job``), their scratch folders, memory and output
(``scratch``, ``host_memory``, ``output_capture``).
"""
