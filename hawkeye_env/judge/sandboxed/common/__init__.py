"""What every sandboxed process runs: its entry point (``entry``: ``-m`` target, limits, GPU wait
setting), the serve loop (``serve_loop``: set-up, lane lock, standby warm-up, framed replies),
device timing (``timing``, ``back_to_back``), warm-up (``warmup``) and, on CPU, the interpreter's
fixes (``interpreter/``).
"""
