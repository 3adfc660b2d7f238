"""Latency and throughput: what a timing run measured, its settings, and the statistics over it (pure numpy).

Every statistic works along the last axis, so bootstrap resamples ``[B, n]`` reduce in one call, and
ignores NaN, which pads resamples of rounds of different lengths (see :mod:`olive_eval.metrics.resampling`).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from pydantic import Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from olive_eval.strict_model import StrictModel

#: Upper bound of warm-up and timed calls: far beyond any useful sample, short of "runs forever".
MAX_RUNS = 100_000
#: Upper bound of ``max_seconds`` for adaptive repeats.
MAX_TIMING_SECONDS = 3600.0
#: Statistic name → percentile, for the percentile sub-types.
PERCENTILES: dict[str, float] = {"p50": 50.0, "p75": 75.0, "p90": 90.0, "p95": 95.0, "p99": 99.0, "p999": 99.9}
#: Statistics over the timed runs, for latency (ms) and throughput (samples/s) alike.
RUN_STATISTICS: tuple[str, ...] = ("avg", "min", "max", *PERCENTILES, "std", "cv")
#: Latency statistics measured once per model load, not over the timed runs (ONNX Runtime perf_test's).
LOAD_STATISTICS: tuple[str, ...] = ("load", "first_call")
#: Statistics where less is better whatever the metric: spread.
SPREAD_STATISTICS: tuple[str, ...] = ("std", "cv")
#: Generation latency quantities, measured per run from the token times: name → (unit, higher is better). Times
#: are per run (ms); rates count the tokens of every row (tokens/s): ``tokens_per_second`` the tokens after the
#: first over the time after the first, ``prefill_tokens_per_second`` the prompt tokens over the time to first token.
GENERATION_QUANTITIES: dict[str, tuple[str, bool]] = {
    "ttft": ("ms", False),
    "tpot": ("ms", False),
    "e2e": ("ms", False),
    "tokens_per_second": ("tokens/s", True),
    "prefill_tokens_per_second": ("tokens/s", True),
}
#: A generation sub-type is a quantity (its mean over runs) or a quantity with one of these suffixes.
GENERATION_FORMS: dict[str, str] = {"": "avg", "_p50": "p50", "_p90": "p90"}
GENERATION_STATISTICS: tuple[str, ...] = tuple(
    quantity + suffix for quantity in GENERATION_QUANTITIES for suffix in GENERATION_FORMS
)
#: The model's own memory footprint during its timed calls (MB), for any runtime: once per run, not resampled.
#: Measured on generation (token by token) when its metric_config sets a generation length, else on the
#: model's ordinary call.
PEAK_MEMORY = "peak_memory_mb"


def generation_sub_type(name: str) -> tuple[str, str] | None:
    """``(quantity, statistic)`` of a generation sub-type (``ttft_p90`` → ``("ttft", "p90")``), None otherwise."""
    for suffix, statistic in GENERATION_FORMS.items():
        quantity = name.removesuffix(suffix) if suffix else name
        if (not suffix or name.endswith(suffix)) and quantity in GENERATION_QUANTITIES:
            return quantity, statistic
    return None


class TimingConfig(StrictModel):
    """Olive's latency/throughput metric_config (warm-up, timed runs, sleep), plus adaptive repeats."""

    warmup_num: int = Field(10, ge=0, le=MAX_RUNS, description=f"Untimed calls first (at most {MAX_RUNS:,}).")
    repeat_test_num: int | Literal["auto"] = Field(
        20,
        description=f"Timed calls (1 to {MAX_RUNS:,}), or 'auto': time until the interval of each statistic is "
        "within target_rel_ci of its value, or max_seconds have passed.",
    )
    sleep_num: float = Field(0, ge=0, le=60, description="Seconds to sleep after each timed call (at most 60).")
    yield_between_runs: bool = Field(
        False,
        description="Call time.sleep(sleep_num) after every run even when it is 0, as Olive's loop does (that "
        "yields the CPU between runs); the default times calls back to back, as onnxruntime_perf_test does.",
    )
    target_rel_ci: float | None = Field(
        None, gt=0, lt=1, description="repeat_test_num 'auto': the interval half-width to reach, relative (0.02)."
    )
    max_seconds: float | None = Field(
        None, gt=0, le=MAX_TIMING_SECONDS, description="repeat_test_num 'auto': the time budget per model (30 s)."
    )

    @field_validator("repeat_test_num", mode="before")
    @classmethod
    def _count_or_auto(cls, value: object) -> object:
        if value == "auto" or (isinstance(value, int) and not isinstance(value, bool)):
            return value
        raise PydanticCustomError(
            "int_or_auto", "expected an integer or 'auto', got {given}", {"given": json.dumps(value, default=str)}
        )

    @model_validator(mode="after")
    def _check(self) -> TimingConfig:
        if self.repeat_test_num == "auto":
            self.target_rel_ci = 0.02 if self.target_rel_ci is None else self.target_rel_ci
            self.max_seconds = 30.0 if self.max_seconds is None else self.max_seconds
            return self
        if not 1 <= self.repeat_test_num <= MAX_RUNS:
            raise ValueError(f"repeat_test_num must be 1 to {MAX_RUNS:,} or 'auto', got {self.repeat_test_num}")
        for key in ("target_rel_ci", "max_seconds"):
            if getattr(self, key) is not None:
                raise ValueError(f"{key} applies to repeat_test_num 'auto' (adaptive repeats), not to a fixed count")
        return self

    @property
    def adaptive(self) -> bool:
        return self.repeat_test_num == "auto"


class GenerationTimingConfig(TimingConfig):
    """A generation latency sub-type's metric_config: every run decodes exactly ``max_new_tokens`` tokens per row
    (end-of-sequence ignored) from prompts of ``prompt_tokens`` tokens, so runs and models compare like for like."""

    prompt_tokens: int | None = Field(
        None,
        ge=1,
        description="Tokens per prompt: the data's first prompts repeated or cut to it (default: cut to "
        "the shortest of them).",
    )
    max_new_tokens: int = Field(32, ge=2, description="Tokens decoded per row and run (at least 2: tpot needs two).")

    @model_validator(mode="after")
    def _fixed_count(self) -> GenerationTimingConfig:
        if self.adaptive:
            raise ValueError("generation latency takes a fixed repeat_test_num, not 'auto'")
        return self


#: The keys that make a timing config a generation one (its fixed lengths).
GENERATION_LENGTH_KEYS = frozenset(GenerationTimingConfig.model_fields) - frozenset(TimingConfig.model_fields)


@dataclass
class TimingSample:
    """What one timing run measured for one model.

    ``rounds`` holds the seconds of each timed call, one array per round: interleaved timing gives a
    model several rounds between the other models' rounds, and a paired comparison resamples them
    together. ``loads`` and ``first_calls`` hold the seconds to load the model and of its first call
    after loading, once per load.
    """

    batch_size: int
    rounds: list[np.ndarray] = field(default_factory=list)
    loads: list[float] = field(default_factory=list)
    first_calls: list[float] = field(default_factory=list)
    #: Generation runs: each quantity's seconds per run, in the same rounds (``GENERATION_QUANTITIES``), the count
    #: a rate quantity's seconds are for (tokens), and the fixed lengths.
    quantities: dict[str, list[np.ndarray]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    lengths: dict[str, int] = field(default_factory=dict)
    #: ``peak_memory_mb``'s bytes, when the run measured memory and the system could tell.
    peak_memory_bytes: int | None = None

    @property
    def seconds(self) -> np.ndarray:
        return np.concatenate(self.rounds) if self.rounds else np.empty(0)

    def of(self, quantity: str) -> TimingSample:
        """The runs of one generation quantity as a sample of its own: its seconds, its count as the batch size."""
        if quantity not in self.quantities:
            raise ValueError(f"no {quantity} was measured: the run did not generate token by token")
        return TimingSample(self.counts.get(quantity, self.batch_size), self.quantities[quantity])

    @property
    def runs(self) -> int:
        return int(sum(len(r) for r in self.rounds))


def run_statistic(values: np.ndarray, name: str) -> np.ndarray:
    """A statistic of run values along the last axis, ignoring NaN padding."""
    values = np.asarray(values, dtype=np.float64)
    if values.shape[-1] == 0:
        raise ValueError("no timed runs")
    padded = bool(np.isnan(values).any())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows cannot occur; silence numpy's check
        if name == "avg":
            return np.nanmean(values, axis=-1) if padded else np.mean(values, axis=-1)
        if name == "min":
            return np.nanmin(values, axis=-1)
        if name == "max":
            return np.nanmax(values, axis=-1)
        if name in PERCENTILES:
            if padded:
                return _padded_percentile(values, PERCENTILES[name])
            return np.percentile(values, PERCENTILES[name], axis=-1)
        if name == "std":
            return np.nanstd(values, axis=-1, ddof=1)
        if name == "cv":
            return 100.0 * np.nanstd(values, axis=-1, ddof=1) / np.nanmean(values, axis=-1)
    raise ValueError(f"unknown statistic '{name}'; valid: {', '.join(RUN_STATISTICS)}")


def _padded_percentile(values: np.ndarray, q: float) -> np.ndarray:
    """``np.nanpercentile(values, q, axis=-1)``, value for value, without its row-by-row loop (numpy takes a
    NaN-padded ``[B, n]`` one row at a time, 50x slower on a bootstrap's rows): the rows holding the same number
    of values go to ``np.percentile`` together, each sorted first (NaN sorts last) and cut to its values, the same
    arithmetic numpy does on one row's values. A row of NaN only is NaN, as numpy's."""
    rows = values.reshape(-1, values.shape[-1])
    counts = rows.shape[1] - np.isnan(rows).sum(axis=1)
    ordered = np.sort(rows, axis=1)
    out = np.full(len(rows), np.nan)
    for count in np.unique(counts[counts > 0]).tolist():
        same = counts == count
        out[same] = np.percentile(ordered[same, :count], q, axis=-1)
    return out.reshape(values.shape[:-1])[()]


def _shape(out: np.ndarray, values: np.ndarray) -> np.ndarray | float:
    return float(out) if np.ndim(values) == 1 else out


def latency_ms(seconds: np.ndarray, name: str) -> np.ndarray | float:
    """A latency statistic: milliseconds, or percent for ``cv``. Percentiles use numpy's linear
    interpolation, as Olive does. ``seconds`` is one sample ``[n]`` (a float back) or ``[B, n]``."""
    values = np.asarray(seconds, dtype=np.float64)
    out = run_statistic(values, name)
    return _shape(out if name == "cv" else out * 1000.0, values)


def throughput_per_s(seconds: np.ndarray, batch_size: int, name: str) -> np.ndarray | float:
    """A throughput statistic in samples per second (``cv`` in percent), shaped like :func:`latency_ms`'s.

    ``avg`` is samples over total time (``batch / mean latency``), the rate a user observes. The other
    statistics are taken over the per-run rates, so ``min`` is the slowest run and ``p90`` the 90th
    percentile of rates (Olive maps ``p90`` to the latency p90, which is the 10th percentile of rates).
    """
    values = np.asarray(seconds, dtype=np.float64)
    if name == "avg":
        return _shape(batch_size / run_statistic(values, "avg"), values)
    return _shape(run_statistic(batch_size / values, name), values)


@dataclass(frozen=True)
class RunStatistic:
    """A timing sub-type as a function of the runs' seconds ``[..., n]``: :func:`latency_ms` (no
    ``batch_size``) or :func:`throughput_per_s`. A percentile says so (:meth:`as_percentile`), and the
    bootstrap then resamples it without gathering the runs (:func:`olive_eval.metrics.stats.resampled_percentiles`).
    """

    name: str
    batch_size: int | None = None

    def __call__(self, seconds: np.ndarray) -> np.ndarray | float:
        if self.batch_size is None:
            return latency_ms(seconds, self.name)
        return throughput_per_s(seconds, self.batch_size, self.name)

    def as_percentile(self) -> tuple[Callable[[np.ndarray], np.ndarray], float, float] | None:
        """(seconds -> the values the percentile is taken of, the percentile, the result's scale), or None."""
        if self.name not in PERCENTILES:
            return None
        if self.batch_size is None:
            return (lambda seconds: seconds), PERCENTILES[self.name], 1000.0
        batch = self.batch_size
        return (lambda seconds: batch / seconds), PERCENTILES[self.name], 1.0


def load_statistic_ms(sample: TimingSample, name: str) -> float:
    """``load`` or ``first_call``: the mean over the model's loads, in milliseconds."""
    values = sample.loads if name == "load" else sample.first_calls
    if not values:
        raise ValueError(f"no {name} was measured")
    return 1000.0 * float(np.mean(values))
