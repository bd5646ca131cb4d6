"""Judging a measurement: budgets from markers, comparison with a stored baseline."""
