"""Unit ``row_reduction``: row-wise reductions kept in registers (RMSNorm forward)."""
