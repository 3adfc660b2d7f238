"""Evaluating one model: each unit of the plan's per-model work once (prediction passes, user functions, file
sizes, lm-eval runs: :mod:`olive_eval.engine.work`); timing is a phase of its own
(:mod:`olive_eval.engine.timing.timing_phase`).

A model's evaluation is a self-contained unit of work: given the run config and the model, it returns the
model's results and the evidence for paired goals (see :func:`olive_eval.engine.model.unit.run_unit`). The runner talks to
runtimes only through the ``Runtime`` interface and to the work only through the registered kinds of work,
so a new runtime, metric family or kind of work changes nothing here. Every kind of work records its values
through the model's :class:`~olive_eval.engine.model.recorder.Recorder`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from olive_eval.config.metric_key import MetricKey, metric_keys
from olive_eval.config.run import RunConfig
from olive_eval.engine.model.evidence import Evidence
from olive_eval.engine.model.guard import failure_message, format_traceback
from olive_eval.engine.model.recorder import Recorder
from olive_eval.engine.model.runtime_settings import settings_key
from olive_eval.engine.passes.baseline_outputs import BaselineLink
from olive_eval.engine.passes.sequential import SequentialUnit
from olive_eval.engine.run.context import RunContext
from olive_eval.engine.run.data_store import DataStore
from olive_eval.engine.run.judges import RunJudges
from olive_eval.engine.run.plan import Plan
from olive_eval.engine.work.base import ModelUnit, UnitContext
from olive_eval.judges.base import Judges
from olive_eval.progress import Progress, silent
from olive_eval.records.results import ModelResult
from olive_eval.records.writer import InstanceWriter
from olive_eval.runtimes.base import ModelConfig, Runtime

if TYPE_CHECKING:
    from olive_eval.engine.passes.shards import Sharding


def settle_status(result: ModelResult, keys: Mapping[str, MetricKey]) -> None:
    """``ok``, or ``partial``/``failed`` by how many of the model's metrics carry an error; the failed metrics are
    named from ``keys`` (result key -> :class:`MetricKey`), never by splitting the key."""
    if result.status == "failed" and not result.metrics:
        return  # it did not load: the error says why
    failed = list(
        dict.fromkeys(keys[key].metric if key in keys else key for key, sub in result.metrics.items() if sub.error)
    )
    measured = any(sub.error is None for sub in result.metrics.values())
    result.status = "ok" if not failed else "partial" if measured else "failed"
    result.error = None
    if failed:
        first = next(sub.error for sub in result.metrics.values() if sub.error)
        result.error = f"metric(s) {', '.join(failed)} failed: {first}"


class ModelEvaluator:
    """One model's per-model work (passes, file sizes, user functions, lm-eval runs) on the run's plan and data."""

    def __init__(
        self,
        run: RunConfig,
        plan: Plan,
        data: DataStore,
        progress: Progress = silent,
        writer: InstanceWriter | None = None,
        base_dir: Path | None = None,
        context: RunContext | None = None,
        judges: Judges | None = None,
    ) -> None:
        self.run = run
        self.context = context or RunContext.of(run)
        #: the run's judges, by spec key (the caller closes them; by default the plan's, loaded on first use)
        self.judges = judges if judges is not None else RunJudges(plan.judges, self.context)
        self.plan = plan
        self.data = data
        self.progress = progress
        self.writer = writer
        self.base_dir = base_dir
        #: model name -> joint key -> what the value rests on, for paired goal checks after all models ran
        self.evidence: dict[str, dict[str, Evidence]] = {}
        #: the model being evaluated and its result so far (see :meth:`result_of`)
        self._current: tuple[str, ModelResult] | None = None
        #: the runtimes of the model being evaluated, by settings key
        self._runtimes: dict[str, Runtime] = {}
        #: data config -> examples its last pass went over: a pass's progress total where the data does not say
        self.examples_seen: dict[str, int] = {}

    def result_of(self, name: str) -> ModelResult | None:
        """The result of model ``name`` as far as this evaluator got with it (kept when a run is interrupted
        while the model is evaluated); None when it never evaluated that model."""
        if self._current is not None and self._current[0] == name:
            return self._current[1]
        return None

    def evaluate(
        self,
        model_config: ModelConfig,
        folder: str | None = None,
        stages: Sequence[Sequence[str]] | None = None,
        stop: Callable[[ModelResult], str | None] | None = None,
        sharding: Sharding | None = None,
        baseline_outputs: BaselineLink | None = None,
        sequential: SequentialUnit | None = None,
    ) -> ModelResult:
        """One model: load each runtime variant, then run every unit of work of the plan.

        A unit that fails (a pass, a timing run, a user function) fails only its own metrics; the others
        keep their values and the model is ``partial``. A model that does not load is ``failed``.
        ``stages`` (metric names) are measured in turn; when ``stop`` names a missed goal after one, the
        rest are not measured (``early_stopped``). ``sharding`` (the executor's choice): each prediction pass in
        that many shards, mapped as it says. ``sequential``: a sequential run's candidate, whose passes
        stop once its goals are decided. KeyboardInterrupt is not caught: the caller records it.
        """
        name = model_config.display_name()
        result = ModelResult(status="pending", folder=folder)
        self._current = (name, result)
        started = time.perf_counter()
        recorder = Recorder(name, result, folder=folder)
        self.evidence[name] = recorder.evidence
        self._runtimes = {}
        try:
            self._load(recorder, model_config)
        except Exception as exc:
            result.status, result.error = "failed", failure_message(exc)
            result.tracebacks.append(format_traceback(exc))
        else:
            ctx = UnitContext(
                self.run, self.context, model_config, recorder, self._runtimes, self.data, self.progress,
                self.writer, self.base_dir, sharding, self.judges, baseline_outputs, self.examples_seen, sequential,
            )  # fmt: skip
            for names in stages if stages is not None else [None]:
                for unit in self._units(names):
                    try:
                        unit.run(ctx)
                    except Exception as exc:
                        recorder.fail(unit.measures(), exc)
                if stop is not None and (missed := stop(result)) is not None:
                    result.early_stopped = missed
                    break
            settle_status(result, metric_keys(self.run.all_metrics))
        finally:
            for runtime in self._runtimes.values():
                runtime.close()
            self._runtimes = {}
        result.seconds = round(time.perf_counter() - started, 3)
        return result

    def _load(self, recorder: Recorder, model_config: ModelConfig) -> None:
        for variant, metric_names in self.plan.settings_variants():
            self.progress(recorder.model_name, "loading model")
            with recorder.stage("load"):
                runtime = self.context.load(model_config, variant)
            self._runtimes[settings_key(variant)] = runtime
            recorder.result.runtimes.append({**runtime.describe(), "metrics": metric_names})

    def _units(self, names: Sequence[str] | None) -> list[ModelUnit]:
        """The plan's per-model units (of the metrics ``names``, when given)."""
        units = self.plan.model_units()
        if names is None:
            return units
        return [kept for unit in units if (kept := unit.restricted(names)) is not None]
