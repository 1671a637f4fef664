"""ws_attention_fwd: a Gluon warp-specialized attention forward in FlashAttention-3's structure.

``kernel.py`` holds the Gluon solution (``attention_causal``, ``attention``; needs a Hopper GPU)
and ``attention_or_twin`` (the experts' call), ``loops.py`` the consumers' key-block schedules,
``naive.py`` the Triton-language flash attention of ``units.online_softmax`` (not specialized),
``reference.py`` the PyTorch reference and ``meta.py`` the taxonomy entry; ``README.md`` is the
usage guide.
"""
