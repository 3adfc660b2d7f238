"""Results a run does not measure again: a model's from the result cache, or, with ``--resume``, from the earlier
run into the same output folder; and a fresh evaluation stored in the cache, with the per-example files it wrote.

A reused result is this run's: its folder, goals and Pareto mark are set again; its timing values are kept only
where the cache holds them (``cache_timings``), else the run times the model again in its rounds.
"""

from __future__ import annotations

from olive_eval.config import RunConfig
from olive_eval.engine.cache import record_files
from olive_eval.engine.cache.result_cache import ResultCache
from olive_eval.engine.model.unit import ModelEvaluation
from olive_eval.progress import Progress
from olive_eval.records.results import ModelResult
from olive_eval.records.writer import InstanceWriter
from olive_eval.runtimes.base import ModelConfig


class Reuse:
    """The run's cache and the results ``--resume`` keeps, by model name."""

    def __init__(
        self,
        config: RunConfig,
        cache: ResultCache | None,
        kept: dict[str, ModelResult],
        writer: InstanceWriter,
        folders: dict[str, str],
        progress: Progress,
        timing_keys: set[str],
    ) -> None:
        self.config, self.cache, self.writer, self.folders, self.progress = config, cache, writer, folders, progress
        #: results an earlier run finished and ``--resume`` keeps, by model name
        self.kept = dict(kept)
        self._keys: dict[str, str] = {}
        #: models whose timing results came from the cache (``cache_timings``): not timed again
        self.timed: set[str] = set()
        self._timing_keys = timing_keys

    def reused(self, model: ModelConfig) -> ModelEvaluation | None:
        """The model's results from the cache or, with ``--resume``, from the earlier run; None: evaluate it."""
        name = model.display_name()
        timings = self.config.cache_timings
        if self.cache is not None and self.cache.enabled:
            self._keys[name] = self.cache.key(self.config, model, include_timing=timings)
        hit = self.cache.get(self._keys[name]) if name in self._keys else None
        source = "the cache"
        if hit is None and name in self.kept:
            hit, source, timings = ModelEvaluation(self.kept.pop(name), {}), "the previous run", False
        if hit is None:
            return None
        result = hit.result
        result.folder, result.goals_met, result.pareto, result.early_stopped = self.folders[name], None, None, None
        for sub in result.metrics.values():
            sub.goal = None  # goals are checked against this run's baseline
        if timings and any(key in result.metrics for key in self._timing_keys):
            self.timed.add(name)
        else:
            result.metrics = {k: v for k, v in result.metrics.items() if k not in self._timing_keys}
            result.timings = {}  # measured again in this run's rounds
            hit.evidence = {k: v for k, v in hit.evidence.items() if k not in self._timing_keys}
        record_files.restore(self.config, self.writer, self.folders[name], hit.records)
        self.progress(name, f"results from {source}")
        return hit

    def store(self, name: str, evaluation: ModelEvaluation) -> None:
        """Cache a full evaluation (not a failed or early-stopped one: those depend on more than the model), with
        the per-example files it wrote."""
        key = self._keys.get(name)
        if self.cache is not None and key and evaluation.result.status == "ok" and not evaluation.result.early_stopped:
            evaluation.records = record_files.collect(self.config, self.writer, self.folders[name])
            self.cache.put(key, evaluation)

    def store_fresh(self, name: str, evaluation: ModelEvaluation) -> None:
        """A model's evaluation stored as it finished, unless timings are cached too (stored once timed)."""
        if not self.config.cache_timings:
            self.store(name, evaluation)
