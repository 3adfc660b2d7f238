"""A prediction pass: one model over one data config, batch by batch, every metric scoring as it goes.

For each batch: the model is called (once per input group), the call is timed, the outputs are
post-processed and checked, and the batch's fields are handed to every metric of the pass. The pass keeps
per-batch timing records (model call, and model call + post-processing), so throughput over the real data
and a speech model's RTFx are ordinary metrics over them. A live progress task (:mod:`olive_eval.progress`)
advances by each batch's examples; without one, a line every ``NOTE_EVERY`` batches says how far the pass got.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from olive_eval.data.batch import GROUP_SEP, Batch, Column, Columns, Outputs, split_group
from olive_eval.engine.passes.fields import OUTPUT, TIMING_FIELDS, pass_fields
from olive_eval.engine.passes.held_batches import HeldBatches, rows_before, takes_joined
from olive_eval.engine.run.data_store import DataView
from olive_eval.errors import EvaluationError
from olive_eval.progress import NO_TASK, Task
from olive_eval.runtimes.base import Runtime

#: ``note(message)``: a line on how far the pass got, for the model's progress.
Note = Callable[[str], None]

#: Without a live task, a progress line every this many batches.
NOTE_EVERY = 200
#: Outputs of at most this many values are checked for NaN with ``isfinite`` (a small bool array); larger ones
#: with one sum, which allocates nothing.
SMALL_OUTPUT = 1 << 16


@dataclass
class BatchTiming:
    index: int
    size: int
    model_seconds: float
    seconds: float  # model call + post-processing


@dataclass
class PassRecord:
    """What a pass measured besides the metrics: per-batch timing, examples, notes."""

    data_config: str
    batches: list[BatchTiming] = field(default_factory=list)
    notes: dict[str, int] = field(default_factory=dict)
    non_finite: int = 0
    first_non_finite: int | None = None

    @property
    def examples(self) -> int:
        return sum([b.size for b in self.batches])  # a list: no generator step per batch

    def summary(self) -> dict[str, Any]:
        return {
            "examples": self.examples,
            "batches": len(self.batches),
            "model_seconds": round(sum([b.model_seconds for b in self.batches]), 9),
            "seconds": round(sum([b.seconds for b in self.batches]), 9),
            **({"notes": dict(self.notes)} if self.notes else {}),
        }


def run_pass(
    runtime: Runtime,
    data: DataView,
    consumers: list[Any],
    progress: Note,
    task: Task = NO_TASK,
    stop: Callable[[int], bool] | None = None,
    hold: bool = True,
) -> PassRecord:
    """Stream ``data`` through ``runtime``; ``consumers`` get each batch's fields (``update``); ``task`` advances
    by each batch's examples once the batch is answered, outside its timed model call. ``stop(examples)``, asked
    after each scored batch, ends the pass early when true (a sequential run's decided candidate). ``hold``:
    ordinary batches are held and handled joined (:mod:`olive_eval.engine.passes.held_batches`) where nothing
    asks for them one by one (a stop, per-example timing fields); False handles every batch alone."""
    record = PassRecord(data.config.name)
    post = data.post
    available = pass_fields(data.prepared.columns, data.prepared.references)
    for consumer in consumers:
        consumer.check_fields(available)
    timed = reads_timing(consumers)
    references = data.prepared.references
    scoring = _Scoring(consumers, references, timed, record)
    held = None
    if hold and stop is None and not timed and all(takes_joined(consumer) for consumer in consumers):
        held = HeldBatches({*kept_columns(consumers), *([references] if references is not None else [])})
    #: The input names of the last batch found to have no groups: a batch of the same names is called as it is.
    plain_inputs: list[str] | None = None
    for index, batch in enumerate(data.batches()):
        if batch.inputs != plain_inputs:
            plain_inputs = batch.inputs if not has_groups(batch.inputs) else None
        started = time.perf_counter()
        if plain_inputs is not None:  # the ordinary batch: one call, without building its groups
            named: Outputs | None = runtime.predict(batch)
            called = time.perf_counter()
            if held is not None and type(batch) is Batch:
                size = batch.size
                timing = BatchTiming(index, size, called - started, called - started)
                added = held.add(batch, named, timing, post)
                if added is False:  # it does not join the held batches: they go first
                    _handle_held(held, post, data, scoring)
                    added = held.add(batch, named, timing, post)
                if added:
                    record.batches.append(timing)
                    task.advance(size)
                    if held.full:
                        _handle_held(held, post, data, scoring)
                    if index and index % NOTE_EVERY == 0 and not task.live:
                        progress(f"{batch.start + size} examples of '{data.config.name}'")
                    continue
            if held is not None and held.held:
                _handle_held(held, post, data, scoring)
            predictions, raw = post.apply(named, batch, data.context), post.raw(named)
        else:
            if held is not None and held.held:
                _handle_held(held, post, data, scoring)
            outputs = _call(runtime, batch)
            called = time.perf_counter()
            predictions, raw = _post_process(post, outputs, batch, data)
            named = outputs[None] if list(outputs) == [None] else None
        done = time.perf_counter()
        size = batch.size
        record.batches.append(BatchTiming(index, size, called - started, done - started))
        task.advance(size)
        scoring.batch(batch, predictions, raw, named, [size], index, started, called, done)
        if index and index % NOTE_EVERY == 0 and not task.live:
            progress(f"{batch.start + size} examples of '{data.config.name}'")
        if stop is not None and stop(batch.start + size):
            break
    if held is not None and held.held:
        _handle_held(held, post, data, scoring)
    record.notes = dict(data.context.notes)
    if not record.batches:
        raise EvaluationError(f"data config '{data.config.name}' has no examples")
    if record.non_finite:
        raise EvaluationError(
            f"the model's output on '{data.config.name}' has non-finite values (NaN or infinity) in "
            f"{record.non_finite} of {record.examples} examples (first: example {record.first_non_finite}); "
            "check the model and its inputs"
        )
    return record


class _Scoring:
    """What the pass does with a (possibly joined) batch once post-processed: check it for non-finite values,
    build its fields, hand them to every consumer."""

    def __init__(self, consumers: list[Any], references: str | None, timed: bool, record: PassRecord) -> None:
        self.consumers, self.references, self.timed, self.record = consumers, references, timed, record

    def batch(
        self, batch: Batch, predictions: Column, raw: Column, named: Outputs | None, sizes: list[int],
        index: int = 0, started: float = 0.0, called: float = 0.0, done: float = 0.0,
    ) -> None:  # fmt: skip
        """``sizes``: the joined batches' sizes (one: a batch alone, whose ``index`` and times are given when a
        consumer reads the timing fields)."""
        record = self.record
        failed = record.non_finite > 0
        bad = non_finite_rows(raw)
        scored = sizes
        if bad is not None:
            first = int(np.argmax(bad))
            record.non_finite += int(bad.sum())
            if record.first_non_finite is None:
                record.first_non_finite = batch.start + first
            scored = sizes[: rows_before(sizes, first)]  # the batches before the first with one: scored, as before
        if failed or not scored:
            return  # the pass fails: count the rest, score nothing more
        n = sum(scored)
        fields: Columns = dict(batch.columns)
        if self.references is not None:
            fields["references"] = batch.columns[self.references]
        fields["prediction"] = predictions
        fields["logits"] = raw
        if self.timed:
            size = sizes[0]
            fields.update(
                inference_seconds=np.full(size, (done - started) / size),
                model_seconds=np.full(size, (called - started) / size),
                batch_index=np.full(size, index),
            )
        if named is not None:  # a model's named outputs, for metrics comparing one of them (fidelity)
            for name, value in named.items():
                fields[OUTPUT + name] = value
        if n != sum(sizes):
            fields = {name: column[:n] for name, column in fields.items()}
        cache: dict[Any, np.ndarray] = {}
        if len(scored) == 1:
            for consumer in self.consumers:
                consumer.update(fields, batch.start, cache)
        else:
            for consumer in self.consumers:
                consumer.update_joined(fields, batch.start, scored, cache)


def _handle_held(held: HeldBatches, post: Any, data: DataView, scoring: _Scoring) -> None:
    """Post-process the held batches joined and score them; one at a time where the joined post-process fails
    (the failing batch's error is then raised where it would have been)."""
    batch, outputs, parts = held.take()
    sizes = [part.timing.size for part in parts]
    started = time.perf_counter()
    try:
        predictions, raw = post.apply(outputs, batch, data.context), post.raw(outputs)
    except Exception:
        for part in parts:
            alone = time.perf_counter()
            predictions, raw = post.apply(part.outputs, part.batch, data.context), post.raw(part.outputs)
            part.timing.seconds += time.perf_counter() - alone
            scoring.batch(part.batch, predictions, raw, part.outputs, [part.timing.size])
        return
    seconds = time.perf_counter() - started
    total = sum(sizes)
    for part in parts:  # the joined post-processing's time, shared by the batches' examples
        part.timing.seconds += seconds * part.timing.size / total
    scoring.batch(batch, predictions, raw, outputs, sizes)


def kept_columns(consumers: list[Any]) -> set[str]:
    """The fields the consumers read: the data columns among them are what held batches keep."""
    return {name for consumer in consumers for name in consumer.pass_reads()}


def has_groups(inputs: list[str]) -> bool:
    """Whether any model input belongs to a group (``"group:input"``): the model is then called once per group."""
    return any(GROUP_SEP in name for name in inputs)


def _call(runtime: Runtime, batch: Batch) -> dict[str | None, Outputs]:
    """The model's outputs, per input group (a single ``None`` group for an ordinary batch)."""
    groups = batch.groups
    if list(groups) == [None] or not groups:
        return {None: runtime.predict(batch)}
    out: dict[str | None, Outputs] = {}
    for group, inputs in groups.items():
        columns = {k: v for k, v in batch.columns.items() if split_group(k)[0] is None}
        columns.update(inputs)
        out[group] = runtime.predict(Batch(columns, list(inputs), batch.start, batch.call_mode))
    return out


def _post_process(post: Any, outputs: dict[str | None, Outputs], batch: Batch, data: DataView) -> tuple[Column, Column]:
    """Predictions and the raw output they came from; with groups, one dict per example (group → value)."""
    if list(outputs) == [None]:
        out = outputs[None]
        return post.apply(out, batch, data.context), post.raw(out)
    predictions: dict[str, Column] = {}
    raw: dict[str, Column] = {}
    for group, out in outputs.items():
        assert group is not None
        columns = {split_group(k)[1]: v for k, v in batch.columns.items() if split_group(k)[0] in (None, group)}
        group_batch = Batch(
            columns, [split_group(n)[1] for n in batch.inputs if n.startswith(group + GROUP_SEP)], batch.start
        )
        predictions[group] = post.apply(out, group_batch, data.context)
        raw[group] = post.raw(out)
    n = batch.size
    return [{g: p[i] for g, p in predictions.items()} for i in range(n)], [
        {g: r[i] for g, r in raw.items()} for i in range(n)
    ]


def reads_timing(consumers: list[Any]) -> bool:
    """Whether a consumer reads the per-example timing fields: only then are they built for each batch. A consumer
    that cannot say what it reads (no ``pass_reads``) gets them."""
    for consumer in consumers:
        reads = getattr(consumer, "pass_reads", None)
        if reads is None or not TIMING_FIELDS.isdisjoint(reads()):
            return True
    return False


def non_finite_rows(raw: Column) -> np.ndarray | None:
    """Rows of the output metrics read that hold NaN or infinity (None when all are finite). One NaN input
    can turn every logit into NaN, and metrics would still return numbers (accuracy 0.1, AUROC 0.5)."""
    if not isinstance(raw, np.ndarray) or raw.dtype.kind != "f":
        return None
    if raw.size <= SMALL_OUTPUT:
        # no warning to silence: cheaper than the sum's errstate on a small output; and a zero byte looked for in
        # the bool array's bytes (a C search) is cheaper than numpy's ``all`` reduction
        if b"\0" not in np.isfinite(raw).tobytes():
            return None
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            if np.isfinite(np.add.reduce(raw, axis=None)):  # one pass: a finite sum has no NaN or infinity in it
                return None
    bad = ~np.isfinite(raw)
    if not bad.any():
        return None
    return bad.reshape(len(bad), -1).any(axis=1) if bad.ndim > 1 else bad
