"""olive-eval: evaluate a baseline model and optimized candidates against prioritized goals.

The public names are imported on first use (PEP 562): ``import olive_eval`` stays light, and the config's
pydantic models, numpy and the runtimes load when ``evaluate`` or ``RunConfig`` is first read.
"""

from olive_eval.lazy import lazy_attributes

__version__ = "0.1.0"

#: Each public name → the module that defines it.
_SOURCES = {
    "ConfigError": "olive_eval.errors",
    "Evaluation": "olive_eval.engine.session.session",
    "EvaluationError": "olive_eval.errors",
    "OliveEvalError": "olive_eval.errors",
    "Metric": "olive_eval.metrics",
    "MetricValue": "olive_eval.metrics.compute",
    "RunConfig": "olive_eval.config",
    "RunResult": "olive_eval.records.results",
    "compute_metric": "olive_eval.api",
    "evaluate": "olive_eval.api",
    "goals_missed": "olive_eval.decide.gate",
    "load_run_config": "olive_eval.config",
    "register_metric": "olive_eval.metrics",
}

__all__ = sorted(_SOURCES)

__getattr__, __dir__ = lazy_attributes(globals(), _SOURCES)
del lazy_attributes
