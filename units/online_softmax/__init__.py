"""Unit ``online_softmax``: streaming softmax with a running max and sum (flash-attention's core)."""
