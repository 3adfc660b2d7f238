"""Data: datasets, pre-processing, batching, post-processing and filters, as registered components."""
