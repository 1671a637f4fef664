"""Every byte from a worker is untrusted: decoding with limits (``reply_decode``, ``pickle_depth``),
every reply field against the parent's plan (``reply_check``), every launch plan and CPU kernel entry
(``plan_check``, ``source_check``).
"""
