"""Olive's timing metric types, latency and throughput: statistics over repeated model calls on one batch,
measured by the run's timing phase."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from olive_eval.errors import EvaluationError
from olive_eval.metrics.performance import (
    GENERATION_LENGTH_KEYS,
    GENERATION_QUANTITIES,
    GENERATION_STATISTICS,
    LOAD_STATISTICS,
    PEAK_MEMORY,
    RUN_STATISTICS,
    SPREAD_STATISTICS,
    GenerationTimingConfig,
    RunStatistic,
    TimingConfig,
    TimingSample,
    generation_sub_type,
    load_statistic_ms,
)
from olive_eval.metrics.types import TIMING, MetricType, model_keys, register_metric_type


class _TimingType(MetricType):
    """Statistics over repeated model calls on one batch (a :class:`TimingSample`)."""

    work = TIMING
    resamplable = True
    higher_is_better: ClassVar[bool]

    def sub_type_names(self) -> list[str]:
        return list(RUN_STATISTICS)

    def default_higher_is_better(self, sub_type: str) -> bool:
        return False if sub_type in SPREAD_STATISTICS else self.higher_is_better

    def can_resample(self, sub_type: str) -> bool:
        return sub_type in RUN_STATISTICS

    def unit_of(self, sub_type: str) -> str | None:
        return "%" if sub_type == "cv" else self.unit

    def config_keys(self, sub_type: str) -> set[str]:
        return model_keys(TimingConfig)

    def parse_metric_config(self, sub_type: str, raw: dict[str, Any] | None) -> TimingConfig:
        return TimingConfig.model_validate(raw or {})

    def statistic(self, sub_type: str, batch_size: int) -> Callable[[np.ndarray], np.ndarray | float]:
        """The sub-type as a function of the timed runs' seconds ``[..., n]`` (for resampling)."""
        raise NotImplementedError

    def score(self, sample: TimingSample, sub_type: str) -> float:
        return float(self.statistic(sub_type, sample.batch_size)(sample.seconds))

    def sample_for(self, sample: TimingSample, sub_type: str) -> TimingSample:
        """The part of a timing run's sample that a sub-type is a statistic of (all of it by default)."""
        return sample


@register_metric_type
class LatencyType(_TimingType):
    """Milliseconds per model call (``cv`` in percent); ``load`` and ``first_call`` once per model load; the
    generation sub-types (``ttft``, ``tpot``, ``e2e``, ``tokens_per_second``, ``prefill_tokens_per_second``, each
    with ``_p50`` and ``_p90``), measured token by token; and ``peak_memory_mb``, the model's own memory during its
    timed calls, for every runtime."""

    name = "latency"
    unit = "ms"
    higher_is_better = False

    def sub_type_names(self) -> list[str]:
        return [*RUN_STATISTICS, *LOAD_STATISTICS, *GENERATION_STATISTICS, PEAK_MEMORY]

    def default_higher_is_better(self, sub_type: str) -> bool:
        generation = generation_sub_type(sub_type)
        if generation is not None:
            return GENERATION_QUANTITIES[generation[0]][1]
        return super().default_higher_is_better(sub_type)

    def can_resample(self, sub_type: str) -> bool:
        return generation_sub_type(sub_type) is not None or super().can_resample(sub_type)

    def unit_of(self, sub_type: str) -> str | None:
        generation = generation_sub_type(sub_type)
        if generation is not None:
            return GENERATION_QUANTITIES[generation[0]][0]
        return "MB" if sub_type == PEAK_MEMORY else super().unit_of(sub_type)

    def config_keys(self, sub_type: str) -> set[str]:
        if sub_type in GENERATION_STATISTICS or sub_type == PEAK_MEMORY:
            return model_keys(GenerationTimingConfig)
        return super().config_keys(sub_type)

    def parse_metric_config(self, sub_type: str, raw: dict[str, Any] | None) -> TimingConfig:
        """A generation sub-type's config fixes the lengths; ``peak_memory_mb``'s does when it names one (then it
        is measured on token-by-token generation, beside the generation sub-types of the same config), else it is
        an ordinary timing config and the memory is measured on the model's own call (beside ``avg``...)."""
        lengths = GENERATION_LENGTH_KEYS & set(raw or {})
        if sub_type in GENERATION_STATISTICS or (sub_type == PEAK_MEMORY and lengths):
            return GenerationTimingConfig.model_validate(raw or {})
        return super().parse_metric_config(sub_type, raw)

    def statistic(self, sub_type: str, batch_size: int) -> Callable[[np.ndarray], np.ndarray | float]:
        generation = generation_sub_type(sub_type)
        if generation is None:
            return RunStatistic(sub_type)
        quantity, statistic = generation
        return RunStatistic(statistic, batch_size if GENERATION_QUANTITIES[quantity][0] == "tokens/s" else None)

    def sample_for(self, sample: TimingSample, sub_type: str) -> TimingSample:
        generation = generation_sub_type(sub_type)
        return sample if generation is None else sample.of(generation[0])

    def score(self, sample: TimingSample, sub_type: str) -> float:
        if sub_type in LOAD_STATISTICS:
            return load_statistic_ms(sample, sub_type)
        if sub_type == PEAK_MEMORY:
            if sample.peak_memory_bytes is None:
                raise EvaluationError("the process's resident memory cannot be read on this system")
            return sample.peak_memory_bytes / 2**20
        return super().score(self.sample_for(sample, sub_type), sub_type)


@register_metric_type
class ThroughputType(_TimingType):
    """Samples per second (``cv`` in percent)."""

    name = "throughput"
    unit = "samples/s"
    higher_is_better = True

    def statistic(self, sub_type: str, batch_size: int) -> Callable[[np.ndarray], np.ndarray | float]:
        return RunStatistic(sub_type, batch_size)
