"""The classification family (Olive's ``accuracy`` type): typed inputs, pure numpy kernels, registered metrics.

* :mod:`.inputs`: columns checked at the edge, the task inferred, class labels validated;
* :mod:`.label_lists`: lists of class names per example (multi-label) binarized into the multilabel counts;
* kernels: :mod:`.stat_scores` (per-example tp/fp/fn/tn and their reductions), :mod:`.confusion_rows` (the
  rows themselves, from booleans or label pairs), :mod:`.auroc`, :mod:`.curves` (ROC AUC and average precision,
  scikit-learn's definitions), :mod:`.thresholds` (Valor's counts at score thresholds), :mod:`.threshold_confusion`
  (Valor's confusion matrices), :mod:`.pr_curves` (Valor's precision-recall curves);
* :mod:`.functional`: accuracy, precision, recall and F1 as functions of arrays;
* registration: :mod:`.metrics` (accuracy_score, f1_score, precision, recall, auroc) and :mod:`.sweep_metrics`
  (roc_auc, average_precision and the structured sub-types).

Nothing is imported here, so that looking up one metric imports only the module that registers it.
"""
