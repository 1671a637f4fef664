"""Adapters: ``hawkeye/KernelOpt-v2`` in the shapes other RL stacks load, each a thin layer over the
env and the one evaluator (``common.py``: the shared judge and the env's episodes).

=====================  ==========================================  ==============================
module                 what the stack loads                         extra
=====================  ==========================================  ==============================
``verifiers_env.py``   ``KernelTaskset`` / ``KernelMultiTurnEnv``   ``pip install 'hawkeye-env[verifiers]'``
                       (id ``hawkeye-env``), ``load_environment()``
``skyrl.py``           ``KernelOptTextEnv`` (SkyRL-gym text env)    ``pip install 'hawkeye-env[skyrl]'``
``verl.py``            ``compute_score`` / ``compute_score_batch``  none (veRL calls it)
=====================  ==========================================  ==============================

Each module imports its library at import time and raises ``ImportError`` with the install hint
when it is missing. TRL's recipes live in ``training/``; an OpenEnv client in ``hawkeye_env/server``.
"""
