"""chunked_scan: chunk-parallel simple-GLA (scalar-decay linear attention) forward.

``kernel.py`` runs the chunked formulation (intra-chunk MMAs with a log-space decay mask, a
carried [D, D] state across chunks); ``naive.py`` the token-by-token recurrence; ``reference.py``
the PyTorch recurrence; ``gla.py`` vector-gated GLA and ``delta_rule.py`` (Gated) DeltaNet
kernels; ``meta.py`` the taxonomy entry; ``README.md`` the guide.
"""
