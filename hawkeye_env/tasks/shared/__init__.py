"""Helpers several curated tasks share: reference maths (attention, the delta rule) and vendor baselines."""
