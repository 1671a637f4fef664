"""Unit ``persistent_splitk``: split-K for skinny GEMMs and a persistent tile loop for large ones."""
