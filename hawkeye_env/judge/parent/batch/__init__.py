"""Many verdicts at once: the local pool over GPU lanes (``pool``), the Ray backend
(``ray_backend``) and the choice between them (``backends``).
"""
