"""The semantic segmentation family: pure numpy kernels over pixel confusion matrices (:mod:`.kernels`) and the
registered sub-types (:mod:`.metrics`: mean_iou, pixel_accuracy, per-class precision/recall/F1, the confusion
matrix).

Nothing is imported here, so that looking up one metric imports only the module that registers it.
"""
