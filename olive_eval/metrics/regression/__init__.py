"""The regression family (``accuracy`` sub-types over numeric predictions): errors, R² and correlations.

* :mod:`.inputs`: predictions and references as float64 ``[n, outputs]``, NaN and its policy;
* kernels: :mod:`.moments` (Pearson's r and R² from centred sums), :mod:`.ranks` (average ranks, Spearman's rho,
  Kendall's tau-b), in C where :mod:`.native` finds the extension built from ``_ranks.c``, in numpy otherwise;
* registration: :mod:`.error_metrics` (mse, rmse, mae: map/reduce) and :mod:`.pair_metrics` (r2_score, pearson,
  spearman, kendall_tau: global values resampled from per-example pairs), on :mod:`.base`.

Nothing is imported here, so that looking up one metric imports only the module that registers it.
"""
