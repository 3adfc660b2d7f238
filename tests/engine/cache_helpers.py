"""Shared by the cache tests: a toy run with every kind of value a result holds, and its keys."""

from __future__ import annotations

import copy
import json
from dataclasses import asdict
from pathlib import Path

import numpy as np

from olive_eval import evaluate
from olive_eval.config import load_run_config
from olive_eval.engine.cache.result_cache import ResultCache
from olive_eval.engine.model.evidence import Evidence
from olive_eval.engine.model.unit import ModelEvaluation
from olive_eval.metrics.performance import TimingSample
from olive_eval.metrics.types import metric_type_registry
from tests.engine.unit_helpers import evaluate_model

METRICS = [
    {
        "name": "acc",
        "type": "accuracy",
        "sub_types": [
            {
                "name": "accuracy_score",
                "priority": 1,
                "goal": {"type": "max-degradation", "value": 0.05, "confidence": 0.9, "n_resamples": 200},
                "confidence_interval": {"n_resamples": 200},
            },
            {"name": "f1_score", "metric_config": {"task": "multiclass", "num_classes": 3, "average": "none"}},
            {"name": "roc_auc"},
        ],
    },
    {"name": "size", "type": "size_on_disk", "sub_types": [{"name": "bytes"}]},
    {
        "name": "lat",
        "type": "latency",
        "sub_types": [
            {
                "name": "avg",
                "priority": 2,
                "goal": {"type": "percent-max-degradation", "value": 500},
                "metric_config": {"repeat_test_num": 3, "warmup_num": 1},
            }
        ],
    },
]


def as_json(value) -> str:
    """Exact, NaN-aware comparison of result objects (NaN != NaN in dataclass equality)."""
    return json.dumps(asdict(value), sort_keys=True, allow_nan=True)


def make_cache(folder: Path, warnings: list[str] | None = None) -> ResultCache:
    return ResultCache(folder, warn=(warnings if warnings is not None else []).append)


def key_of(config: dict, model: str = "cand", *, include_timing: bool = False, cache: ResultCache | None = None) -> str:
    run = load_run_config(copy.deepcopy(config))
    model_config = next(m for m in run.models() if m.display_name() == model)
    cache = cache or make_cache(Path(config["output_dir"]).parent / "cache")
    return cache.key(run, model_config, include_timing=include_timing)


def real_evaluation(path: Path) -> ModelEvaluation:
    """A full result (goals, timing info, intervals, per_class, details) with the unit's evidence and a timing
    sample, plus the non-finite values results can hold."""
    unit = evaluate_model(path, "cand")
    result = evaluate(path).models["cand"]
    assert result.status == "ok" and result.metrics["acc-accuracy_score"].goal is not None
    assert result.metrics["lat-avg"].timing is not None and result.metrics["acc-f1_score"].per_class
    assert result.metrics["acc-roc_auc"].details and result.metrics["acc-accuracy_score"].ci_low is not None
    result.metrics["acc-accuracy_score"].goal.change_ci_low = float("-inf")
    result.metrics["lat-avg"].timing.ratio_ci_high = float("inf")
    result.metrics["acc-roc_auc"].details["curve"] = [float("nan"), 1.5, None, "nan"]
    result.tracebacks.append("Traceback: kept for --debug")
    sample = TimingSample(2, [np.array([0.01, 0.012]), np.array([0.011, 0.013, 0.0105])], [0.2], [0.05])
    latency = metric_type_registry.get("latency")
    evidence = {**unit.evidence, "lat-avg": Evidence(timings=sample, statistic=latency.statistic("avg", 2))}
    return ModelEvaluation(result, evidence)


def write_config(toy, tmp_path: Path) -> tuple[dict, Path]:
    """The toy run (a baseline and a candidate ``cand``) with :data:`METRICS`, as a dict and as a file."""
    config = toy.config({"cand": 0.3}, METRICS)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(config))
    return config, path
