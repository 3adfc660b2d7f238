"""A prediction pass split into shards: contiguous ranges of the data config's examples, scored apart and merged.

Each shard runs the ordinary pass (:func:`olive_eval.engine.passes.pass_loop.run_pass`) over its range and hands back,
per metric sub-type, the per-example statistics (or a global metric's fields) in example order. The driver
joins the shards' rows in example order and finishes each metric once, on the same scorer code a one-process
pass uses: the reduction, the confidence intervals and the paired goals see arrays identical to one process,
so every value is bit-identical. A batch belongs to the shard its first example falls in; shard bounds are
rounded to whole batches, so no batch is split.

Per-example records (instance files, sample logs) are held by each shard (:class:`~olive_eval.records.sinks.HeldSink`)
and written by the driver, shard after shard, into the files a one-process pass writes. A metric that fails in a
shard fails alone, as in one process: the shard hands back its error in place of its rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, fields, replace
from functools import partial
from itertools import pairwise
from pathlib import Path
from typing import Any

from olive_eval.config.metric import MetricConfig
from olive_eval.config.run import RunConfig
from olive_eval.data.batch import Batch, Columns, num_rows, take
from olive_eval.data.collate import DefaultDataloader
from olive_eval.data.components import build
from olive_eval.data.prepared import PrepareContext, Prepared
from olive_eval.engine.model.guard import Guarded, failure_message, scoring_error
from olive_eval.engine.model.recorder import Recorder
from olive_eval.engine.model.runtime_settings import Settings
from olive_eval.engine.passes.baseline_outputs import BaselineLink, pass_baseline
from olive_eval.engine.passes.pass_loop import PassRecord, run_pass
from olive_eval.engine.passes.repeats import with_repeats
from olive_eval.engine.passes.scored import Scored
from olive_eval.engine.passes.scoring import scorer_for
from olive_eval.engine.run.context import RunContext
from olive_eval.engine.run.data_store import DataStore, DataView
from olive_eval.engine.run.judges import RunJudges, plan_judges
from olive_eval.errors import ConfigError, EvaluationError
from olive_eval.judges.base import Judges
from olive_eval.progress import Progress
from olive_eval.records.sinks import HeldSink
from olive_eval.records.writer import HeldRecords, InstanceWriter
from olive_eval.runtimes.base import ModelConfig

#: Maps the shard function over the shards' work, in order (``map``, a pool's ``map``, an executor's).
Mapper = Callable[[Callable[["ShardWork"], "ShardPart"], list["ShardWork"]], Iterable["ShardPart"]]


@dataclass(frozen=True)
class Sharding:
    """How an evaluator runs each prediction pass: in ``shards`` shards, their work mapped by ``mapper`` (the
    executor's choice: in this process, in child processes, as Ray tasks)."""

    shards: int = 1
    mapper: Mapper = map


@dataclass
class RangeView(DataView):
    """A data view giving only the batches whose first example lies in ``[start, stop)``."""

    start: int = 0
    stop: int = 0

    def batches(self) -> Iterator[Batch]:
        if isinstance(self.dataloader, DefaultDataloader):  # fixed-size batches: cut the chunks, collate no more
            prepared = replace(self.prepared, chunks=RowRange(self.prepared.chunks, self.start, self.stop))
            for batch in self.dataloader.batches(prepared):
                batch.start += self.start
                batch.call_mode = self.call_mode
                yield batch
            return
        for batch in super().batches():
            if batch.start >= self.stop:
                return
            if batch.start >= self.start:
                yield batch


@dataclass
class RowRange:
    """The rows ``[start, stop)`` of prepared chunks, as a ``chunks`` callable (it pickles)."""

    chunks: Callable[[], Iterator[Columns]]
    start: int
    stop: int

    def __call__(self) -> Iterator[Columns]:
        offset = 0
        for chunk in self.chunks():
            n = num_rows(chunk)
            lo, hi = max(self.start - offset, 0), min(self.stop - offset, n)
            offset += n
            if lo >= hi:
                if offset >= self.stop:
                    return
                continue
            yield chunk if (lo, hi) == (0, n) else {k: take(v, slice(lo, hi)) for k, v in chunk.items()}
            if offset >= self.stop:
                return


def ranged(view: DataView, start: int, stop: int) -> RangeView:
    return RangeView(**{f.name: getattr(view, f.name) for f in fields(DataView)}, start=start, stop=stop)


def shard_ranges(examples: int, shards: int, data_config: str, batch_size: int = 1) -> list[tuple[int, int]]:
    """``shards`` contiguous ranges of ``examples``, bounds on whole batches; more shards than examples (or
    batches) is the user's error: some shard would have nothing to score."""
    batches = -(-examples // batch_size)
    if shards > batches:
        what = f"{examples} examples" if batch_size == 1 else f"{batches} batches of {batch_size} examples"
        raise ConfigError(f"shards is {shards}, more than the {what} of data config '{data_config}'")
    bounds = [min(examples, (batches * i // shards) * batch_size) for i in range(shards + 1)]
    return list(pairwise(bounds))


def check_shards(run: RunConfig, shards: int, data_configs: list[str], store: DataStore) -> None:
    """More shards than a pass's data has batches is the config's error (``executor.shards``), found before any
    model loads where the count is known without a model: the data's rows as stored or pre-processed without a
    tokenizer, and a dataloader with a ``batch_size`` (batches of that size). Otherwise (a tokenizer's rows, a
    dataloader of the user's) each model's pass says so when it runs."""
    if shards <= 1:
        return
    first = run.models()[0]
    for name in dict.fromkeys(data_configs):
        config = run.data_config(name)
        if config.is_dummy:
            continue
        batch_size = getattr(build("dataloader", config.dataloader_config), "batch_size", None)
        if not isinstance(batch_size, int) or batch_size < 1:
            continue
        context = PrepareContext(name, first.processor_folder(), run.allow_download, planning=True)
        try:
            prepared = build("pre-process", config.pre_process_data_config).prepare(store.source(name), context)
            rows = _rows_up_to(prepared, (shards - 1) * batch_size + 1)
        except Exception:  # rows made with the model's tokenizer (deferred), or a user's function raising: the
            continue  # pass counts them, or reports the failure with its location, as the plan-time checks leave it
        try:
            shard_ranges(rows, shards, name, batch_size)
        except ConfigError as exc:
            raise ConfigError(exc.message, path="executor.shards") from None


def _rows_up_to(prepared: Prepared, enough: int) -> int:
    """The prepared data's rows, counted (where its source does not say) only up to ``enough``: as many as the
    shards need is read, not a large file."""
    if prepared.num_rows is not None:
        return int(prepared.num_rows)
    rows = 0
    for chunk in prepared.chunks():
        rows += num_rows(chunk)
        if rows >= enough:
            break
    return rows


@dataclass(frozen=True)
class ShardWork:
    """One shard of one model's pass: what a worker needs to run it (it pickles)."""

    run: RunConfig
    model: ModelConfig
    data_config: str
    settings: Settings
    metrics: tuple[str, ...]
    start: int
    stop: int
    #: Hold the rows' per-example records for the driver to write (the run writes instance files).
    records: bool = False
    #: Where the baseline keeps its outputs, for metrics comparing with them (fidelity)
    baseline: BaselineLink | None = None


@dataclass
class ShardPart:
    """What a shard hands back: its pass record, per metric its scorer's held rows (or the error that stopped
    the metric) and the held per-example records by (metric, kind)."""

    record: PassRecord
    held: list[Any]
    records: dict[tuple[str, str], HeldSink] = field(default_factory=dict)


def score_shard(work: ShardWork, store: DataStore | None = None, judges: Judges | None = None) -> ShardPart:
    """Run the pass over the shard's range; the metrics are not finished (the driver finishes them). ``judges``:
    the run's, for a shard scored in the run's process; a shard elsewhere loads its own and closes them."""
    run = work.run
    store = store if store is not None else DataStore(run)
    metrics = [m for name in work.metrics for m in run.all_metrics if m.name == name]
    context = RunContext.of(run)
    own = RunJudges(plan_judges(run), context) if judges is None else None
    runtime = context.load(work.model, work.settings)
    try:
        view = store.view(work.data_config, work.model)
        runtime, view = with_repeats(runtime, view, metrics, work.model)
        writer = HeldRecords() if work.records else None
        name = work.model.display_name()
        capture, baseline = pass_baseline(work.baseline, metrics, work.data_config, work.settings, work.start)
        guarded = [
            Guarded(m, scorer_for(m, name, run.source_dir, writer, "", judges or own, baseline)) for m in metrics
        ]
        consumers = [*([capture] if capture is not None else []), *guarded]
        try:
            record = run_pass(runtime, ranged(view, work.start, work.stop), consumers, lambda note: None)
        except BaseException:
            if capture is not None:
                capture.discard()
            raise
        if capture is not None:
            capture.finish()
        held = [
            g.scorer.held() if g.error is None else EvaluationError(failure_message(g.error)) for g in guarded
        ]  # the error as its message: an exception's class may not unpickle in the driver
        return ShardPart(record, held, writer.sinks if writer is not None else {})
    finally:
        runtime.close()
        if own is not None:
            own.close()


def plan_shards(
    run: RunConfig,
    model: ModelConfig,
    data_config: str,
    settings: Settings,
    metrics: list[str],
    shards: int,
    store: DataStore,
    records: bool = False,
    baseline: BaselineLink | None = None,
) -> list[ShardWork]:
    """The shards' work for one model's pass over ``data_config``."""
    view = store.view(data_config, model)
    examples = view.prepared.num_rows
    if examples is None:
        examples = sum(batch.size for batch in view.batches())
    batch_size = int(getattr(view.dataloader, "batch_size", 1) or 1)
    ranges = shard_ranges(examples, shards, data_config, batch_size)
    return [
        ShardWork(run, model, data_config, settings, tuple(metrics), lo, hi, records, baseline) for lo, hi in ranges
    ]


def merged_record(data_config: str, parts: list[ShardPart]) -> PassRecord:
    """The shards' pass records as one: batches renumbered in example order, notes summed."""
    record = PassRecord(data_config)
    for part in parts:
        offset = len(record.batches)
        record.batches.extend(replace(b, index=offset + i) for i, b in enumerate(part.record.batches))
        for note, count in part.record.notes.items():
            record.notes[note] = record.notes.get(note, 0) + count
    return record


def finish_metric(
    metric: MetricConfig, parts: list[ShardPart], index: int, base_dir: Path | None, model: str
) -> list[Scored]:
    """The ``index``-th metric of the pass finished on the shards' held rows; a shard's error is raised."""
    held = [part.held[index] for part in parts]
    for item in held:
        if isinstance(item, Exception):
            raise item
    return scorer_for(metric, model, base_dir, None, "").finish_shards(held)


def write_records(writer: InstanceWriter, folder: str, metric: MetricConfig, parts: list[ShardPart]) -> None:
    """The shards' held records of ``metric``, shard after shard, into the files one pass writes."""
    for kind in ("instances", "samples"):
        held = [part.records[(metric.name, kind)] for part in parts if (metric.name, kind) in part.records]
        if not held:
            continue
        if kind == "instances":
            sink = writer.instances(folder, metric.name)
        else:
            sink = writer.sample_log(folder, metric.name, metric.sample_log_num, metric.sample_log_dir)
        for part in held:
            part.replay(sink)
        sink.close()


def merge_shards(
    run: RunConfig, works: list[ShardWork], parts: list[ShardPart], base_dir: Path | None = None
) -> tuple[PassRecord, dict[str, list[Scored]]]:
    """The shards' parts, in example order, finished as one pass: its record and each metric's scores."""
    first = works[0]
    record = merged_record(first.data_config, parts)
    metrics = [m for name in first.metrics for m in run.all_metrics if m.name == name]
    name = first.model.display_name()
    scored = {metric.name: finish_metric(metric, parts, i, base_dir, name) for i, metric in enumerate(metrics)}
    return record, scored


def sharded_pass(
    run: RunConfig,
    store: DataStore,
    sharding: Sharding,
    data_config: str,
    settings: Settings,
    metrics: list[MetricConfig],
    model_config: ModelConfig,
    recorder: Recorder,
    writer: InstanceWriter | None,
    base_dir: Path | None,
    progress: Progress,
    judges: Judges | None = None,
    baseline: BaselineLink | None = None,
) -> None:
    """The pass over ``data_config`` in ``sharding.shards`` shards run by ``sharding.mapper``: the same records, values
    and per-example files as one pass of the runner (:class:`~olive_eval.engine.model.runner.ModelEvaluator`).
    ``judges``: the evaluator's, for shards mapped in this process (a mapper that sends them elsewhere runs each on
    its own)."""
    names = [m.name for m in metrics]
    name = recorder.model_name
    progress(name, f"predicting on '{data_config}' in {sharding.shards} shards")
    with recorder.stage(f"pass:{data_config}"):
        works = plan_shards(
            run, model_config, data_config, settings, names, sharding.shards, store, writer is not None, baseline
        )
        # in-process: the run's data and judges
        parts = list(sharding.mapper(partial(score_shard, store=store, judges=judges), works))
    recorder.record_pass(data_config, merged_record(data_config, parts))
    progress(name, f"finishing the scores of {len(names)} metric(s) on '{data_config}'")
    for i, metric in enumerate(metrics):
        try:
            scored = finish_metric(metric, parts, i, base_dir, name)
            if writer is not None:  # a metric that failed to score has no file, as in one pass
                write_records(writer, recorder.records_folder, metric, parts)
            recorder.record_scored(metric, scored)
        except Exception as exc:
            recorder.fail_metric(metric, scoring_error(metric, exc))
