"""The timing phase: every model's timed calls, in rounds that interleave the models, and their results."""
