"""Metrics: one registry, one module per family of pure numpy kernels."""

from olive_eval.metrics.base import Kind, Metric, Score
from olive_eval.metrics.registry import get_metric, metric_names, metric_registry, register_metric

__all__ = ["Kind", "Metric", "Score", "get_metric", "metric_names", "metric_registry", "register_metric"]
