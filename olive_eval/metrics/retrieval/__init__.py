"""Retrieval and ranking (embedding models, rerankers): nDCG, MRR, recall, precision and MAP at k, per query.

* :mod:`.inputs`: per-query scored candidates and relevance grades (aligned lists, or dicts keyed by doc id) as
  padded arrays, with one-line errors;
* :mod:`.kernels`: the measures as pure numpy over those arrays, vectorized over queries;
* :mod:`.metrics`: the registered sub-types and their metric_config.

Nothing is imported here, so that looking up one metric imports only the module that registers it.
"""
