"""Scoring a prediction pass as it streams: each metric reads its fields batch by batch.

Batches are scored in chunks of consecutive batches (:mod:`olive_eval.engine.passes.chunks`). Decomposable metrics
(instance, map/reduce) keep only their per-example statistics; sub-types whose statistics are the same work
(``Metric.statistics_key``) compute them once per chunk. Global metrics keep the fields they read. Per-example
records go to the instance file as each chunk is scored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from olive_eval.config.metric import MetricConfig, SubType
from olive_eval.config.metric_fields import merged_fields, remapped
from olive_eval.data.batch import Column, concat
from olive_eval.data.filters import Repeats, apply_filters, build_filter, build_filters
from olive_eval.engine.model.evidence import Evidence
from olive_eval.engine.passes.baseline_outputs import BaselineFields
from olive_eval.engine.passes.chunks import Chunker
from olive_eval.engine.passes.fields import example_rows, is_model_output, row_columns
from olive_eval.engine.passes.held_batches import update_by_batch
from olive_eval.engine.passes.repeats import check_reduced, first_samples, flatten
from olive_eval.engine.passes.scored import Scored
from olive_eval.engine.passes.user_scoring import CustomScorer
from olive_eval.errors import EvaluationError, first_line
from olive_eval.judges.base import Judges
from olive_eval.metrics import Score
from olive_eval.metrics.fidelity.measures import BASELINE
from olive_eval.metrics.reductions import build_reduction
from olive_eval.metrics.resampling import ExampleStats
from olive_eval.records.sinks import HeldSink, RecordSink
from olive_eval.records.writer import HeldRecords, InstanceWriter

Fields = dict[str, Column]
BASELINE_PREDICTION = BASELINE + "prediction"


@dataclass
class _Sub:
    sub: SubType
    metric: Any
    #: The pass fields read for ``metric.reads``, after the metric's and the sub-type's ``fields``.
    reads: tuple[str, ...]
    rows: list[np.ndarray] = field(default_factory=list)
    fields: list[tuple[Column, ...]] = field(default_factory=list)
    error: Exception | None = None


class MetricScorer:
    """One metric config of a pass, for one model."""

    def __init__(
        self,
        config: MetricConfig,
        base_dir: Path | None,
        writer: InstanceWriter | HeldRecords | None,
        model_folder: str,
        judges: Judges | None = None,
        baseline: BaselineFields | None = None,
    ) -> None:
        """``judges``: the run's, by spec key, handed to the metrics that ask one (none: a scorer that finishes
        what shards scored asks no judge). ``baseline``: the baseline's outputs, for metrics that compare with
        them (fidelity)."""
        self.config = config
        self._baseline = baseline
        self.filters = build_filters(config.filters, "filters")
        reduction = build_reduction(config.reduction) if config.reduction is not None else None
        if reduction is not None and reduction.prediction_filter is not None:  # take_first, majority_vote
            self.filters.append(build_filter({"type": reduction.prediction_filter}, "reduction"))
        #: A reduction of the sample scores (mean, pass_at_k): every sample is scored, then reduced per example.
        self._reduce_scores = reduction if reduction is not None and reduction.prediction_filter is None else None
        self._subs = []
        for sub in config.sub_types:
            metric = config.scorer(sub, base_dir)
            self._subs.append(_Sub(sub, metric, remapped(metric.reads, merged_fields(config.fields, sub.fields))))
        if judges is not None:
            for s in self._subs:
                s.metric.bind_judges(judges)
        self._instances = writer.instances(model_folder, config.name) if writer is not None else None
        #: The records' file while they are held until a global sub-type's per-example values are known.
        self._late: RecordSink | HeldSink | None = None
        late = any(not s.metric.decomposes and s.metric.gives_instance_values for s in self._subs)
        if self._instances is not None and config.process_single_instances and late:
            self._late, self._instances = self._instances, HeldSink()
        self._samples = (
            writer.sample_log(model_folder, config.name, config.sample_log_num, config.sample_log_dir)
            if writer is not None and config.sample_log_num
            else None
        )
        self._chunk = Chunker(sorted(self.reads() | {"prediction", "references"}))
        #: A filter takes the examples' rows (lm-eval's ``docs``): every data column is kept for it.
        self._rows = any(flt.takes_docs for flt in self.filters)

    def reads(self) -> set[str]:
        return {name for s in self._subs for name in s.reads}

    def pass_reads(self) -> set[str]:
        """The pass fields this scorer takes from a batch (its chunks keep only these, and a filter's documents
        only the data's own columns; the baseline's own pass takes its compared fields from the batch)."""
        return {*self._chunk.names, *(self._baseline.names if self._baseline is not None else ())}

    def check_fields(self, available: list[str]) -> None:
        given = {*available, *(self._baseline.provides() if self._baseline is not None else ())}
        missing = sorted(name for name in self.reads() - given if not is_model_output(name))
        if missing:
            raise EvaluationError(
                f"metric '{self.config.name}' reads {', '.join(missing)}, which data config '{self.config.data_config}' "
                f"does not give; it gives: {', '.join(available)}"
            )

    def update(self, fields: Fields, start: int, cache: dict[Any, Any]) -> None:
        """Buffer the batch; score the chunk when it is full (see :mod:`olive_eval.engine.passes.chunks`)."""
        size = len(fields["prediction"])
        if self._baseline is not None:
            fields = {**fields, **self._baseline(fields, start, size)}
        chunk = self._chunk
        if self._rows:
            chunk.names = sorted({*chunk.names, *row_columns(fields)})
        if not chunk.joins(fields):
            self._score(cache)
        chunk.add(fields, start, size)
        if chunk.full:
            self._score(cache)

    def takes_joined(self) -> bool:
        """Whether it reads only its :meth:`pass_reads` (not a metric comparing with the baseline's outputs, nor
        one filtering on the examples' rows), so the pass may hand it held batches joined."""
        return self._baseline is None and not self._rows

    def update_joined(self, fields: Fields, start: int, sizes: list[int], cache: dict[Any, Any]) -> None:
        """Consecutive batches of ``sizes`` examples joined in ``fields`` (the pass's held batches): buffered as
        one where the chunk would not close inside them, else batch by batch, so the chunks are those of
        :meth:`update`."""
        chunk = self._chunk
        if not chunk.takes_whole(fields, sizes):
            update_by_batch(self, fields, start, sizes, cache)
            return
        chunk.add(fields, start, sum(sizes))
        if chunk.full:
            self._score(cache)

    def _score(self, cache: dict[Any, Any]) -> None:
        """Score the buffered chunk: statistics once per shared key, per-example scores, records."""
        if not self._chunk.size:
            return
        start, n, view = self._chunk.take()
        view = self._filtered(view)
        scores: dict[str, np.ndarray] = {}
        details: dict[str, list[Any]] = {}
        for s in self._subs:
            if s.error is not None:
                continue
            try:
                self._score_sub(s, view, start, n, cache, scores, details)
            except Exception as exc:  # this sub-type fails; its neighbours go on, unless none is left
                s.error, s.rows, s.fields = exc, [], []
                if all(other.error is not None for other in self._subs):
                    raise
        self._write(view, start, n, {**scores, **details})

    def _score_sub(
        self,
        s: _Sub,
        view: Fields,
        start: int,
        n: int,
        cache: dict[Any, Any],
        scores: dict[str, np.ndarray],
        details: dict[str, list[Any]],
    ) -> None:
        columns = tuple(view[name] for name in s.reads)
        counts = None
        if self._reduce_scores is not None:
            columns, counts = flatten(view, s.reads)
        if not s.metric.decomposes:
            s.fields.append(columns)
            return
        key = s.metric.statistics_key(*columns)
        filtered = repr((self.config.filters, self.config.repeats, self.config.reduction))
        cache_key = (start, n, filtered, s.reads, key)
        cached = cache.get(cache_key) if key is not None else None
        if cached is None:
            stats = s.metric.statistics(*columns)
            details.update(s.metric.instance_details(self._instances is not None) or {})
            if counts is not None:
                stats = self._reduce_scores.reduce(s.metric.instance_scores(stats), counts)
            if key is not None:
                cache[cache_key] = (stats, s.metric)
        else:
            stats, producer = cached
            s.metric.adopt(producer)
        s.rows.append(stats)
        if self._instances is not None:
            per_example = s.metric.instance_scores(stats)
            if per_example is not None:  # None: the metric has no per-example score (detection's mAP)
                scores[s.sub.score_key] = np.asarray(per_example, dtype=np.float64)

    def _filtered(self, fields: Fields) -> Fields:
        """The predictions through the filters; a pass with repeats gives this metric its first ``repeats``."""
        predictions = fields["prediction"]
        repeated = isinstance(predictions, list) and bool(predictions) and isinstance(predictions[0], Repeats)
        if not self.filters and not repeated:
            return fields
        predictions = first_samples(predictions, self.config.repeats or 1)
        docs = example_rows(fields) if self._rows else None
        predictions = apply_filters(self.filters, predictions, docs)
        if repeated and self._reduce_scores is None:
            check_reduced(predictions, self.config.name)
        filtered = {**fields, "prediction": predictions}
        if BASELINE_PREDICTION in fields:  # the baseline's predictions stand for references: filtered alike
            filtered[BASELINE_PREDICTION] = apply_filters(self.filters, fields[BASELINE_PREDICTION], docs)
        return filtered

    def _write(self, view: Fields, start: int, n: int, scores: dict[str, Any]) -> None:
        if "prediction" not in view:
            return
        index = np.arange(start, start + n)
        # what the predictions were scored against: the baseline's, for a metric that reads them (fidelity)
        refs = view[BASELINE_PREDICTION] if BASELINE_PREDICTION in view else view.get("references")
        if self._instances is not None:
            self._instances.write({"index": index, "prediction": view["prediction"], "references": refs, **scores}, n)
        if self._samples is not None and not self._samples.full:
            self._samples.write({"index": index, "prediction": view["prediction"], "target": refs}, n)

    def statistics_so_far(self) -> dict[str, tuple[Any, np.ndarray]]:
        """Per decomposable sub-type (by name): its metric and the statistics of every example given so far (the
        buffered chunk is scored first), for a sequential run's look at the evidence."""
        self._score({})
        return {
            s.sub.name: (s.metric, s.metric.concat_statistics(s.rows))
            for s in self._subs
            if s.error is None and s.metric.decomposes
        }

    def held(self) -> list[tuple[Any, list[np.ndarray], list[tuple[Column, ...]]]]:
        """Per sub-type, what a shard of a sharded pass hands back: its metric (with what ``statistics``
        learnt), its statistics rows and its global metric's fields, in example order."""
        self._score({})
        self._release({})
        self.close()
        # a failed sub-type's error in place of its metric, as its message (its class may not unpickle elsewhere)
        return [
            (s.metric if s.error is None else EvaluationError(first_line(s.error)), s.rows, s.fields)
            for s in self._subs
        ]

    def finish_shards(self, shards: list[list[tuple[Any, list[np.ndarray], list[tuple[Column, ...]]]]]) -> list[Scored]:
        """Finish on the shards' held rows (in example order), as if this scorer had seen every batch."""
        for i, s in enumerate(self._subs):
            s.error = next((shard[i][0] for shard in shards if isinstance(shard[i][0], Exception)), None)
            s.metric = shards[0][i][0] if s.error is None else s.metric
            s.rows = [row for shard in shards for row in shard[i][1]]
            s.fields = [part for shard in shards for part in shard[i][2]]
        return self.finish()

    def finish(self) -> list[Scored]:
        try:
            self._score({})
        except BaseException:
            self.discard()
            raise
        out, late = [], {}
        joined: dict[tuple[Any, ...], np.ndarray] = {}
        for s in self._subs:
            if s.error is not None:
                out.append(Scored(s.sub, Score(float("nan")), error=s.error))
            elif s.metric.decomposes:
                stats = self._joined(s, joined)
                score = s.metric.reduce(stats)
                out.append(Scored(s.sub, score, Evidence(sample=ExampleStats(s.metric, statistics=stats))))
            else:
                columns = tuple(concat([c[i] for c in s.fields]) for i in range(len(s.reads)))
                if self._late is not None:
                    score, per_example = s.metric.compute_with_instances(*columns)
                    if per_example is not None:
                        late[s.sub.score_key] = per_example
                else:
                    score = s.metric.compute(*columns)
                # a structured value (a curve) is never resampled or compared: no evidence is kept for it
                evidence = Evidence(sample=ExampleStats(s.metric, fields=columns)) if s.metric.scalar else None
                out.append(Scored(s.sub, score, evidence))
        self._release(late)
        self.close()
        return out

    @staticmethod
    def _joined(s: _Sub, joined: dict[tuple[Any, ...], np.ndarray]) -> np.ndarray:
        """The sub-type's statistics of every chunk in one array: joined once for the sub-types that shared every
        chunk's statistics (the same arrays, joined by the same method: the same work, joined alike)."""
        key = (type(s.metric).concat_statistics, *(id(part) for part in s.rows))
        if key not in joined:
            joined[key] = s.metric.concat_statistics(s.rows)
        return joined[key]

    def _release(self, late: dict[str, np.ndarray]) -> None:
        """The held records into their file, with the global sub-types' per-example columns (one whose length is
        not the records', samples flattened by a reduction, is left out)."""
        held, sink, self._late = self._instances, self._late, None
        if sink is None or not isinstance(held, HeldSink):
            return
        self._instances, offset = sink, 0
        for columns, n in held.chunks:
            sink.write({**columns, **{k: v[offset : offset + n] for k, v in late.items() if len(v) == held.count}}, n)
            offset += n

    def close(self) -> None:
        for sink in (self._instances, self._samples, self._late):
            if sink is not None:
                sink.close()
        self._instances = self._samples = self._late = None

    def discard(self) -> None:
        for sink in (self._instances, self._samples, self._late):
            if sink is not None:
                sink.discard()
        self._instances = self._samples = self._late = None


def scorer_for(
    metric: MetricConfig,
    model: str,
    base_dir: Path | None,
    writer: InstanceWriter | HeldRecords | None,
    folder: str,
    judges: Judges | None = None,
    baseline: BaselineFields | None = None,
) -> MetricScorer | CustomScorer:
    """The scorer of one metric's pass: the user's function for a type a user function scores (once, on the joined
    columns when the pass is sharded), the sub-types' registered metrics for the others."""
    if metric.metric_type.scored_by_user:
        return CustomScorer(metric, model, writer, folder)
    compares = any(name.startswith(BASELINE) for sub in metric.sub_types for name in metric.reads(sub))
    return MetricScorer(metric, base_dir, writer, folder, judges, baseline if compares else None)
