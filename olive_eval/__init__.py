"""olive-eval: evaluate a baseline model and optimized candidates against prioritized goals."""

from olive_eval.api import compute_metric, evaluate
from olive_eval.config import RunConfig, load_run_config
from olive_eval.errors import ConfigError, EvaluationError, OliveEvalError
from olive_eval.metrics import Metric, register_metric
from olive_eval.metrics.compute import MetricValue
from olive_eval.results import RunResult

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "EvaluationError",
    "Metric",
    "MetricValue",
    "OliveEvalError",
    "RunConfig",
    "RunResult",
    "compute_metric",
    "evaluate",
    "load_run_config",
    "register_metric",
]
