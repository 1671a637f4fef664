"""Adapters: ``hawkeye/KernelOpt-v3`` in the shapes other RL stacks load, each a thin layer over the
env and the one evaluator (``common.py``: the shared judge and the env's episodes).

=====================  ==========================================  ==============================
module                 what the stack loads                         extra
=====================  ==========================================  ==============================
``verifiers_env.py``   ``KernelTaskset`` / ``KernelMultiTurnEnv``   ``pip install 'hawkeye-env[verifiers]'``
                       (id ``hawkeye-env``), ``load_environment()``
``skyrl.py``           ``KernelOptTextEnv`` (SkyRL-gym text env)    ``pip install 'hawkeye-env[skyrl]'``
``verl.py``            ``compute_score`` / ``compute_score_batch``  ``pip install 'hawkeye-env[verl]'``
``verl_tool.py``       ``KernelProfileTool`` (multi-turn tool)      ``pip install 'hawkeye-env[verl]'``
=====================  ==========================================  ==============================

The env's profile action (``hawkeye_env/profile_action.py``) reaches each stack the way it takes an
extra action: verifiers' and SkyRL's envs accept the ``PROFILE`` reply (``profile=True``), veRL's
multi-turn rollouts call the ``profile_kernel`` tool; all go through ``profile_feedback``.

``verifiers_env.py``, ``skyrl.py`` and ``verl_tool.py`` import their library at import time and raise
``ImportError`` with the install hint when it is missing; ``verl.py`` imports nothing of veRL (veRL's reward worker
imports it) and names its install in ``INSTALL_HINT``. TRL's recipes live in ``training/``; an
OpenEnv client in ``hawkeye_env/server``.
"""
