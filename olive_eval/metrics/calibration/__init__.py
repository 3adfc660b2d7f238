"""The calibration family (Olive's ``accuracy`` type): does a model's confidence match how often it is right?

* :mod:`.confidence`: scores and labels checked at the edge, the top-label confidence and hit of each example
  (torchmetrics' rules), the per-example Brier terms;
* :mod:`.binning`: uniform and equal-mass bins, their totals for one set or many resamples at once, ECE and MCE
  from the totals;
* registration: :mod:`.metrics` (ece, mce, brier_score).

Nothing is imported here, so that looking up one metric imports only the module that registers it.
"""
