"""TRUSTED: runs the checked plans, never imports candidate Python nor ``candidate/``. On the GPU
the plans' cubins are loaded with Triton's own loader (``replay_kernels``); on CPU the kernels are
rebuilt from their checked source (``source_rebuild``). Every trial and the timing run here on the
verdict's seeds (``replay``).
"""
