"""The agreement family (``accuracy`` sub-types over class labels): Matthews' correlation and Cohen's kappa.

* :mod:`.kernels`: per-example rows whose sums are what both need (the disagreement, the margins of the confusion
  matrix), and the values from those sums, pure numpy;
* :mod:`.metrics`: the registered ``matthews_corrcoef`` and ``cohen_kappa``.

Nothing is imported here, so that looking up one metric imports only the module that registers it.
"""
