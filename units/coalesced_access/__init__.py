"""Unit ``coalesced_access``: coalesced and vectorized global memory access (a scaled copy)."""
