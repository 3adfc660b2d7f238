"""The timing phase: every model's latency runs, after the per-model work, on one machine.

Timing each model at its own moment lets the drift of a shared machine decide a close comparison. With
``timing.interleave`` (the default) the models take turns in rounds on the same inputs, A B C, then C B A,
and so on, so every model sees the same stretch of machine load (the alternating order cancels a steady
drift within a round as well), and the rounds pair up for the comparison.

``timing.keep_loaded`` (default true) keeps every model loaded for the phase: rounds switch models at
no cost, but all models share memory. With false, a model is loaded for each of its rounds and closed
after it, so one model is in memory at a time; each reload is followed by the warm-up again, and the load
itself is never timed as a run (it is the ``load`` statistic).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from olive_eval.config.run import RunConfig
from olive_eval.data.batch import Batch, split_group
from olive_eval.data.dummy import dummy_inputs
from olive_eval.engine.run.context import RunContext
from olive_eval.engine.run.data_store import DataStore
from olive_eval.engine.timing.generation_timing import bind_timed, record_tokens
from olive_eval.engine.timing.peak_memory import Footprint
from olive_eval.engine.timing.timing import chunk_size, relative_half_width, round_sizes, settle, timed_calls, warm_up
from olive_eval.engine.work.timing import TimingRun
from olive_eval.metrics.performance import LOAD_STATISTICS, PEAK_MEMORY, TimingSample
from olive_eval.progress import NO_TASK, Progress, start_task
from olive_eval.runtimes.base import BoundCall, Runtime, memory_meter


@dataclass
class TimingOutcome:
    """What the phase measured for one model and one timing run: a sample, or the error that stopped it."""

    sample: TimingSample | None = None
    error: Exception | None = None
    target_reached: bool | None = None  # adaptive repeats only
    interleaved: bool = False
    description: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Slot:
    """One model's one timing run during the phase."""

    name: str
    model: Any
    job: TimingRun
    outcome: TimingOutcome = field(default_factory=TimingOutcome)
    runtime: Runtime | None = None
    call: BoundCall | None = None
    elapsed: float = 0.0  # seconds of timed calls so far, against an adaptive run's budget
    done: bool = False
    footprint: Footprint | None = None  # the run has peak_memory_mb: the model's memory, read around its calls

    @property
    def timed(self) -> bool:
        """False when the run only holds load statistics, which need no timed calls."""
        return any(sub.name not in LOAD_STATISTICS for _, sub in self.job.sub_types)

    def measuring(self, part: Callable[[Footprint], AbstractContextManager[None]]) -> AbstractContextManager[None]:
        """``part`` of the footprint (its load, a round's calls) where the run measures memory, else nothing."""
        return part(self.footprint) if self.footprint is not None else nullcontext()

    @property
    def sample(self) -> TimingSample:
        assert self.outcome.sample is not None
        return self.outcome.sample

    def wants_round(self, r: int, sizes: list[int]) -> bool:
        if self.outcome.error is not None or self.done or not self.timed:
            return False
        return self.job.timing.adaptive or r < len(sizes)


class TimingPhase:
    """Runs the plan's timing runs for every model.

    ``inputs(job, runtime, model)`` gives a run's batch; ``statistics(job, batch_size)`` the functions of the
    timed seconds that adaptive repeats must pin down.
    """

    def __init__(
        self,
        run: RunConfig,
        inputs: Callable[[TimingRun, Runtime, Any], Batch],
        statistics: Callable[[TimingRun, int], list[Callable[[np.ndarray], Any]]],
        progress: Progress,
        context: RunContext | None = None,
    ) -> None:
        self.run = run
        self.context = context or RunContext.of(run)
        self.settings = run.timing
        self._inputs = inputs
        self._statistics = statistics
        self.progress = progress
        #: The runtime whose calls were timed last: its own worker threads spinning are no other model's load.
        self._last_timed: Runtime | None = None

    def measure(self, models: list[Any], jobs: list[TimingRun]) -> dict[str, list[TimingOutcome]]:
        """model name → one outcome per timing run, in plan order."""
        slots = [_Slot(m.display_name(), m, job) for m in models for job in jobs]
        for slot in slots:
            if any(sub.name == PEAK_MEMORY for _, sub in slot.job.sub_types):
                slot.footprint = Footprint(memory_meter(slot.model, self.context.device))
        primed = {s.model.type: s for s in reversed(slots) if s.footprint is not None}  # each type's first
        for slot in primed.values():
            self._prime(slot)
        try:
            if self.settings.interleave and len(models) > 1:
                self._interleaved(slots)
            else:
                for slot in slots:
                    self._sequential(slot)
        finally:
            for slot in slots:
                self._close(slot)
        out: dict[str, list[TimingOutcome]] = {m.display_name(): [] for m in models}
        for slot in slots:
            out[slot.name].append(slot.outcome)
        return out

    # ------------------------------------------------------------------ schedules
    def _sequential(self, slot: _Slot) -> None:
        """One model at a time: load, warm up, every run in one block, close."""
        if self._open(slot) and slot.timed:
            config = slot.job.timing
            if config.adaptive:
                while slot.wants_round(0, []) and self._round(slot, 0, rewarm=0, append=True):
                    pass
            else:
                self._round(slot, 0, rewarm=0, n=int(config.repeat_test_num))
        self._close(slot)

    def _interleaved(self, slots: list[_Slot]) -> None:
        """Rounds A B C, C B A, A B C ...: fixed runs split evenly over ``rounds``; adaptive runs go on (at
        least ``rounds`` rounds) until every model has reached its target or spent its time."""
        keep, rounds = self.settings.keep_loaded, self.settings.rounds
        for slot in slots:
            slot.outcome.interleaved = True
            if keep or not slot.timed:
                self._open(slot)  # a run with only load statistics is opened once, then never timed
        sizes = {
            id(s): [] if s.job.timing.adaptive else round_sizes(int(s.job.timing.repeat_test_num), rounds)
            for s in slots
        }
        r = 0
        timed = [s for s in slots if s.timed]
        total = (
            None if any(s.job.timing.adaptive for s in timed) else max((len(sizes[id(s)]) for s in timed), default=0)
        )
        label = f"timing rounds, {len({s.name for s in slots})} models interleaved"
        with start_task(self.progress, "", label, total, "round") if timed else NO_TASK as task:
            while todo := [s for s in slots if s.wants_round(r, sizes[id(s)])]:
                for slot in todo if r % 2 == 0 else reversed(todo):  # A B C, C B A: a steady drift cancels too
                    if not keep and not self._open(slot):
                        continue
                    fixed = sizes[id(slot)]
                    self._round(slot, r, rewarm=1 if keep and r > 0 else 0, n=fixed[r] if fixed else None)
                    if not keep:
                        self._close(slot)
                r += 1
                task.advance()

    # ------------------------------------------------------------------ steps
    def _open(self, slot: _Slot) -> bool:
        """Load the model (timed: ``load``), bind the inputs, time the first call (``first_call``), warm up."""
        try:
            with slot.measuring(Footprint.loading):  # what the load and warm-up leave held is the model's own
                started = time.perf_counter()
                slot.runtime = self.context.load(slot.model, slot.job.settings)
                load_seconds = time.perf_counter() - started
                batch = self._inputs(slot.job, slot.runtime, slot.model)
                slot.call = bind_timed(slot.job.timing, slot.runtime, batch)
                with slot.runtime.call_scope():  # a torch model's threads: set before the clock starts
                    started = time.perf_counter()
                    slot.call()
                    first = time.perf_counter() - started
                if slot.outcome.sample is None:
                    slot.outcome.sample = TimingSample(batch_size=batch.size)
                    slot.outcome.description = slot.runtime.describe()
                slot.sample.loads.append(load_seconds)
                slot.sample.first_calls.append(first)
                if slot.timed:
                    self._warm_up(slot)
        except Exception as exc:
            slot.outcome.error = exc
            self._close(slot)
            return False
        return True

    def _prime(self, slot: _Slot) -> None:
        """Load the model and call it once, measuring nothing, then close it: the one-time set-up of its runtime's
        library (its import, global thread pools) then belongs to no model's footprint (``peak_memory_mb``)."""
        try:
            runtime = self.context.load(slot.model, slot.job.settings)
            try:
                call = bind_timed(slot.job.timing, runtime, self._inputs(slot.job, runtime, slot.model))
                with runtime.call_scope():
                    call()
            finally:
                runtime.close()
        except Exception:  # the measured load that follows reports the model's error, where it belongs
            return

    def _warm_up(self, slot: _Slot) -> None:
        assert slot.runtime is not None and slot.call is not None
        warmup = slot.job.timing.warmup_num
        self.progress(slot.name, f"timing: loaded in {slot.sample.loads[-1] * 1000:.1f} ms; {warmup} warm-up calls")
        with (
            start_task(self.progress, slot.name, "timing warm-up", warmup, "call", transient=True) as task,
            slot.runtime.call_scope(),
        ):
            warm_up(slot.call, warmup, self._reporter(slot), task)

    def _round(self, slot: _Slot, r: int, rewarm: int, n: int | None = None, append: bool = False) -> bool:
        """Time ``n`` calls (adaptive: one chunk) as round ``r``, or add them to the last round (``append``)."""
        try:
            assert slot.call is not None and slot.runtime is not None
            if (not append or not slot.sample.rounds) and slot.runtime is not self._last_timed:
                settle()  # another model's worker threads may still be spinning: let them park
            count = n if n is not None else chunk_size(slot.sample.seconds)
            label = "" if append else f" round {r + 1}"
            self.progress(slot.name, f"timing{label}: {count} runs")
            # the phase's bar counts interleaved rounds, and adaptive chunks add up: their own bars go when done
            transient = slot.outcome.interleaved or append
            # memory is read around the round, never inside a timed call: a round that reads it starts with an
            # untimed call that takes back what the reading released (peak_memory), as the re-warm would
            untimed = rewarm if slot.footprint is None else max(rewarm, 1)
            with slot.runtime.call_scope(), slot.measuring(Footprint.calls):  # torch threads: re-warm and timed
                for _ in range(untimed):  # the first call after the other models ran re-warms caches, untimed
                    slot.call()
                with start_task(self.progress, slot.name, f"timing{label}", count, "run", transient=transient) as task:
                    seconds = timed_calls(slot.call, count, slot.job.timing, self._reporter(slot), task)
            self._last_timed = slot.runtime
            record_tokens(slot.call, slot.sample, count, slot.outcome.description)
            if slot.footprint is not None:
                slot.footprint.record(slot.sample, slot.outcome.description)
        except Exception as exc:
            slot.outcome.error = exc
            self._close(slot)
            return False
        slot.elapsed += float(seconds.sum())
        rounds = slot.sample.rounds
        if append and rounds:
            rounds[-1] = np.concatenate([rounds[-1], seconds])
        else:
            rounds.append(seconds)
        if slot.job.timing.adaptive and (append or len(rounds) >= self.settings.rounds):
            self._check_adaptive(slot)
        return True

    def _check_adaptive(self, slot: _Slot) -> None:
        config, sample = slot.job.timing, slot.sample
        assert config.target_rel_ci is not None and config.max_seconds is not None
        width = relative_half_width(sample.seconds, self._statistics(slot.job, sample.batch_size))
        if width <= config.target_rel_ci:
            slot.outcome.target_reached, slot.done = True, True
        elif slot.elapsed >= config.max_seconds:
            slot.outcome.target_reached, slot.done = False, True
            shown = "no interval yet" if math.isinf(width) else f"±{width:.1%}"
            self.progress(slot.name, f"timing: {config.max_seconds:g} s budget spent at {shown}; stopping")

    def _reporter(self, slot: _Slot) -> Callable[[str], None]:
        return lambda note: self.progress(slot.name, f"timing: {note}")

    @staticmethod
    def _close(slot: _Slot) -> None:
        if slot.runtime is not None:
            slot.runtime.close()
        slot.runtime, slot.call = None, None


def timing_inputs(run: RunConfig, data: DataStore) -> Callable[[TimingRun, Runtime, Any], Batch]:
    """The batch a timing run calls the model on: the data config's first batch as the model sees it (its
    first input group, for several texts per example), or dummy inputs of the model's own shapes. Either carries
    the call mode the accuracy pass uses (the data view's, or the model's own without a post-process)."""

    def inputs(job: TimingRun, runtime: Runtime, model: Any) -> Batch:
        if job.data_config is None or run.data_config(job.data_config).is_dummy:
            params = None if job.data_config is None else run.data_config(job.data_config).load_dataset_config
            columns = dummy_inputs(params, runtime.input_specs())
            return Batch(dict(columns), list(columns), call_mode=model.call_mode(None))
        batch = data.view(job.data_config, model).first_batch()
        groups = batch.groups
        if list(groups) != [None] and groups:
            first = next(iter(groups))
            columns = {k: v for k, v in batch.columns.items() if split_group(k)[0] is None}
            columns.update(groups[first])
            return Batch(columns, list(groups[first]), batch.start, batch.call_mode)
        return batch

    return inputs
