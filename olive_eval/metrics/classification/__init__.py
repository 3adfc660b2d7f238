"""The classification family (Olive's ``accuracy`` type): typed inputs, pure numpy kernels, registered metrics.

* :mod:`.inputs`: columns checked at the edge, the task inferred, class labels validated;
* kernels: :mod:`.stat_scores` (per-example tp/fp/fn/tn and their reductions), :mod:`.curves` (ROC AUC,
  average precision, PR curves), :mod:`.thresholds` (Valor's counts at score thresholds);
* registration: :mod:`.metrics` (accuracy_score, f1_score, precision, recall, auroc) and :mod:`.sweep_metrics`
  (roc_auc, average_precision and the structured sub-types).

Nothing is imported here, so that looking up one metric imports only the module that registers it.
"""
