"""The shape every metric has: a name, a direction, a kind and a typed config.

Kinds (how a metric reduces):

* ``instance``   -- one score per example, then an aggregation (mean by default);
* ``map_reduce`` -- per-example sufficient statistics, then a reduce (F1 from tp/fp/fn counts);
* ``global``     -- computed only over the whole set (AUROC).

Instance and map/reduce metrics expose ``statistics()`` so resampling (confidence intervals, paired
comparisons) can reuse per-example work instead of recomputing the metric from scratch.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from olive_eval.errors import MissingDependencyError
from olive_eval.metrics.aggregations import Aggregation, get_aggregation
from olive_eval.registry import Registry
from olive_eval.strict_model import StrictModel

if TYPE_CHECKING:
    from olive_eval.judges.base import Judges


class Kind(str, Enum):
    INSTANCE = "instance"
    MAP_REDUCE = "map_reduce"
    GLOBAL = "global"


class NoConfig(StrictModel):
    """For metrics that take no metric_config."""


@dataclass
class Score:
    """A metric's value, plus per-class values when the metric was asked for them (``average: none``)."""

    value: float
    per_class: list[float] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: Why the metric has no value on this data (``value`` is then NaN), e.g. AUROC with one class present.
    undefined: str | None = None
    #: A structured value beside (or instead of) the scalar: per-class values with the class names, a
    #: curve, a matrix. JSON-ready; written to results.json as ``details``.
    details: Any = None


class Metric:
    """Base class of every registered metric.

    Subclasses set the class attributes and implement ``statistics`` (instance: one score per
    example, aggregated by ``aggregation``), ``statistics`` + ``reduce`` (map/reduce: additive
    per-example statistics), or ``compute`` (global). ``reads`` names the fields the metric takes, in
    the order ``statistics``/``compute`` take them: fields of the pass (``prediction``, ``logits``, ``references``,
    timing; see :func:`olive_eval.engine.passes.fields.pass_fields`) or columns of the data; checked when the run is planned.
    ``scalar`` is False for a metric whose value is a structure (a curve): it cannot be ranked.
    ``requires`` names packages checked when the metric is configured, with ``extra`` to suggest.
    """

    name: ClassVar[str]
    higher_is_better: ClassVar[bool]
    kind: ClassVar[Kind]
    aggregation: str = "mean"
    reads: ClassVar[tuple[str, ...]] = ("prediction", "references")
    scalar: ClassVar[bool] = True
    Config: ClassVar[type[StrictModel]] = NoConfig
    requires: ClassVar[tuple[str, ...]] = ()
    extra: ClassVar[str | None] = None
    #: lm-eval's ``output_type``: the call mode of the passes it may score (:mod:`olive_eval.metrics.output_types`).
    output_type: ClassVar[str | None] = None
    #: Instance attributes holding working objects (a loaded model, the last batch's matching), not what the
    #: metric learnt: the result cache stores the rest as the metric's state and leaves these to be built again.
    transient: ClassVar[tuple[str, ...]] = ()
    #: A global metric that may give per-example values (:meth:`compute_with_instances`): the scorer holds the
    #: pass's instance records until the whole set is scored, to write them in the same file.
    gives_instance_values: ClassVar[bool] = False
    #: The range of one example's value, where the metric is a mean (or a ratio of sums) of per-example values
    #: (:meth:`ratio_rows`): what an anytime-valid bound on a few examples needs to know beforehand. None: unknown.
    example_range: ClassVar[tuple[float, float] | None] = None

    def __init__(self, config: StrictModel | None = None, aggregation: str | None = None) -> None:
        self.config = config if config is not None else self.Config()
        if aggregation is not None:
            if self.kind is not Kind.INSTANCE:
                raise ValueError(f"aggregation applies to instance metrics; '{self.name}' is {self.kind.value}")
            get_aggregation(aggregation)  # unknown names fail here, listing the registered ones
            self.aggregation = aggregation

    @classmethod
    def check_requirements(cls) -> None:
        for package in cls.requires:
            if importlib.util.find_spec(package) is None:
                raise MissingDependencyError(package, f"metric '{cls.name}'", cls.extra)

    @classmethod
    def from_config(cls, metric_config: dict[str, Any] | None, aggregation: str | None = None) -> Metric:
        cls.check_requirements()
        return cls(cls.Config.model_validate(metric_config or {}), aggregation)

    @property
    def aggregator(self) -> Aggregation:
        return get_aggregation(self.aggregation)

    @property
    def decomposes(self) -> bool:
        """Whether the metric has per-example statistics (instance and map/reduce kinds)."""
        return self.kind is not Kind.GLOBAL

    def statistics(self, *fields: Any) -> np.ndarray:
        """Per-example scores (instance) or sufficient statistics (map/reduce), first axis = examples.

        ``fields`` are the columns of :attr:`reads`, for the examples of one batch (or of the whole set).
        """
        raise NotImplementedError(f"{type(self).__name__} is a global metric and has no per-example statistics")

    def bind_judges(self, judges: Judges) -> None:
        """The run's judges, by spec key, for a metric that asks one (:mod:`olive_eval.metrics.judged`); the run
        loads and closes them, the metric only calls them. Others ignore them."""

    def shared_key(self) -> Any:
        """Identifies the work of ``statistics``: sub-types with the same key (e.g. accuracy, F1, precision
        and recall over the same stat scores) compute it once per batch and share it. None: not shared."""
        return None

    def statistics_key(self, *fields: Any) -> Any:
        """:meth:`shared_key` for the batch of ``fields`` about to be scored: a metric whose settings the data can
        make irrelevant (a number of classes the score columns fix) shares its statistics more widely."""
        return self.shared_key()

    def adopt(self, producer: Metric) -> None:
        """Statistics ``producer`` computed (same ``shared_key``) are about to be reused by this metric: take
        over whatever ``statistics`` learnt on the way (e.g. the inferred classification task)."""

    def instance_details(self, write: bool) -> dict[str, list[Any]] | None:
        """Per-example structured records of the batch ``statistics`` just scored (e.g. a matching's pairs), written
        to the instance files beside the scores, one column per key; None: none. Called once after each
        ``statistics`` (``write``: False when no instance files are written): a metric keeping what it needs until
        then drops it here, and names the attribute in :attr:`transient` (the result cache stores plain data only)."""
        return None

    def concat_statistics(self, parts: list[np.ndarray]) -> np.ndarray:
        """Join the statistics of consecutive batches."""
        return np.concatenate(parts, axis=0) if parts else np.empty(0)

    def reduce(self, statistics: np.ndarray) -> Score:
        """Instance: aggregate the scores. Map/reduce subclasses sum the statistics and finish from there."""
        if self.kind is Kind.INSTANCE:
            return Score(float(self.aggregator(np.asarray(statistics, dtype=np.float64))))
        raise NotImplementedError(f"{type(self).__name__} does not reduce statistics")

    def finalize_totals(self, totals: np.ndarray) -> np.ndarray:
        """Map/reduce: the metric for each row of summed statistics ``[B, *S]`` (one per resample)."""
        return np.array([self.reduce(row[None]).value for row in np.asarray(totals)], dtype=np.float64)

    def instance_scores(self, statistics: np.ndarray) -> np.ndarray | None:
        """One score per example: the instance score, or the metric over that example's statistics alone."""
        if self.kind is Kind.INSTANCE:
            return np.asarray(statistics, dtype=np.float64)
        rows = np.asarray(statistics)
        if len(rows) == 0:
            return np.empty(0)
        unique, inverse = statistics_grouping()(rows)  # once for the sub-types sharing these statistics
        values = self.finalize_totals(unique.reshape(len(unique), *rows.shape[1:]))
        return values[inverse]

    def ratio_rows(self, statistics: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """Per-example (numerators, denominators) whose sums' ratio is the metric, each ratio within
        :attr:`example_range` (a mean: the scores over ones); None where the metric has no such form."""
        if self.example_range is None or self.kind is not Kind.INSTANCE or not self.aggregator.is_mean:
            return None
        scores = np.asarray(statistics, dtype=np.float64).reshape(len(statistics))
        return scores, np.ones(len(scores))

    def compute(self, *fields: Any) -> Score:
        """The metric over the whole set. Global metrics override this."""
        return self.reduce(self.statistics(*fields))

    def compute_with_instances(self, *fields: Any) -> tuple[Score, np.ndarray | None]:
        """The metric over the whole set and, for error analysis, one value per example where the metric
        defines one (:attr:`gives_instance_values`); None: it gives none."""
        return self.compute(*fields), None


def _adopt(name: str, cls: type[Metric], origin: str) -> None:
    """An entry point's Metric subclass, registered under its entry point's name, which must be its ``name``."""
    if getattr(cls, "name", None) != name:
        raise TypeError(f"names a metric whose name is {getattr(cls, 'name', None)!r}, not {name!r}")
    metric_registry.register(name, cls, origin=origin)


#: Every metric: the families defined in the modules of ``olive_eval.metrics``, those user scripts register, and
#: other packages' entry points in the group ``olive_eval.metrics`` (Metric subclasses, loaded on first use).
metric_registry: Registry[type[Metric]] = Registry(
    "metric", packages=("olive_eval.metrics",), group="olive_eval.metrics", base=Metric, adopt=_adopt
)


_GROUPING: list[Any] = []


def statistics_grouping() -> Any:
    """The process's :class:`~olive_eval.metrics.stats.LastGrouping`, which :meth:`Metric.instance_scores` asks (it
    loads on first use to keep this module light)."""
    if not _GROUPING:
        from olive_eval.metrics.stats import LastGrouping

        _GROUPING.append(LastGrouping())
    return _GROUPING[0]
