"""Answer-matching metrics for vision and document QA: pure kernels over predictions and reference answers."""
