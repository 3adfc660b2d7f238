"""The session: a run held open for an optimization loop.

``Evaluation(config)`` loads and checks the config and the data once and holds the output directory.
The baseline is evaluated once; each candidate after it is one more per-model unit and one more set of
timing rounds, interleaved with the baseline, so latency is never compared with a stale number.
results.json is rewritten atomically as each candidate starts and after it. ``evaluate()`` and
``olive-eval --config`` are this session run over the config's own candidates (:meth:`Evaluation.run`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from types import TracebackType
from typing import Any

from pydantic import ValidationError

from olive_eval.config import RunConfig, load_run_config
from olive_eval.config.errors import from_validation_error
from olive_eval.config.executor import ExecutorConfig, executor_config, executor_registry
from olive_eval.config.gate import FailOnMiss
from olive_eval.engine.cache.result_cache import ResultCache
from olive_eval.engine.cache.resume_plan import plan_resume
from olive_eval.engine.executors.base import Executor
from olive_eval.engine.run.identity import checker_identity, datasets_identity
from olive_eval.engine.run.run import Run
from olive_eval.engine.session.candidates import CANDIDATE, CandidateResult, validated_candidate
from olive_eval.errors import ConfigError, UsageError
from olive_eval.progress import Progress, silent
from olive_eval.records.output_dir import OutputDir
from olive_eval.records.provenance import environment
from olive_eval.records.results import ModelResult, RunResult
from olive_eval.registry_spec import SpecError
from olive_eval.runtimes.base import ModelConfig

DEFAULT_OUTPUT_DIR = Path("olive-eval-output")
#: Where a ``fail_on_miss`` handed to the session (the CLI's flag), not the config's, is said to come from.
FAIL_ON_MISS_SOURCE = "<fail_on_miss>"


class Evaluation:
    """An evaluation session over one config; use it as a context manager, or call :meth:`close`.

    ``cache``: True reads and writes each model's results in :meth:`ResultCache.default_folder`, a path
    in that folder, False (the default) neither. ``resume`` keeps what an earlier, unfinished run into the
    same output folder finished, unless the config changed what it depends on. ``warn`` gets one line per
    thing to know (a cache folder not writable, what ``resume`` keeps); by default ``progress("warning", ...)``.
    ``executor`` says where each model is evaluated, in place of the config's ``executor``: a type name
    (``"process"``: the config's other executor keys are kept when its type is the same, else only its
    ``timeout_s``), an executor config (a dict or :class:`ExecutorConfig`), or a built :class:`Executor`
    (the caller closes that one; the session closes those it builds). ``fail_on_miss`` replaces the config's
    (the CLI's ``--fail-on-miss``), checked against its candidates and goals before anything loads (a
    ConfigError from ``<fail_on_miss>``); the session only records it: :func:`olive_eval.decide.gate.goals_missed`
    gives the verdict.
    """

    def __init__(
        self,
        config: RunConfig | dict[str, Any] | str | Path,
        *,
        output_dir: str | Path | None = None,
        progress: Progress = silent,
        allow_download: bool | None = None,
        cache: bool | str | Path = False,
        resume: bool = False,
        warn: Callable[[str], None] | None = None,
        executor: str | dict[str, Any] | ExecutorConfig | Executor | None = None,
        fail_on_miss: FailOnMiss | None = None,
    ) -> None:
        started_at = datetime.now(timezone.utc)
        clock = time.perf_counter()
        warn = warn if warn is not None else (lambda message: progress("warning", message))
        run = load_run_config(config, allow_download=allow_download)
        if fail_on_miss is not None:
            try:
                run = run.with_fail_on_miss(fail_on_miss)
            except ValueError as exc:
                raise ConfigError(str(exc), source=FAIL_ON_MISS_SOURCE) from None
        chosen = _executor(run.executor, executor)
        out_dir = (Path(output_dir) if output_dir is not None else (run.output_dir or DEFAULT_OUTPUT_DIR)).resolve()
        source = run.model_dump(mode="json") if isinstance(config, RunConfig) else config
        env = environment(config_source=source, device=run.device, started=started_at, seeds=run.seeds())
        env["config"] = run.model_dump(mode="json", by_alias=True, exclude_defaults=True)
        env["datasets"] = datasets_identity(run.data_configs)  # the seed's split@version and checker@version
        env["checkers"] = {model.display_name(): checker_identity(model) for model in run.models()}
        kept: dict[str, ModelResult] = {}
        if resume:  # before the output folder is claimed, which clears the earlier run's files
            kept, notes = plan_resume(run, env["config"], out_dir)
            for note in notes:
                warn(note)
        folder = None if cache is False else ResultCache.default_folder() if cache is True else Path(cache)
        try:
            self._run = Run(run, out_dir, progress, env, chosen, cache=ResultCache(folder, warn=warn), kept=kept)
        except ConfigError as exc:  # found by the planner, which does not know the config's name
            raise _named(exc, run) from None
        self._owns_executor = executor is None or isinstance(executor, (str, dict, ExecutorConfig))
        self._baseline_done = False
        self._held = OutputDir(out_dir)
        self._held.open(claim=False)  # claimed once the data is checked: a data error leaves the folder as it was
        self._closed = False

        def claim() -> None:
            self._held.claim({result.folder for result in kept.values() if result.folder})
            for held in self._held.notes:
                warn(held)
            note = self._held.previous_run_note
            if note is not None:
                if not resume:  # --resume has said so already
                    warn(note)
                env["previous_run"] = note

        try:
            try:
                self._run.open(claim=claim)
            except KeyboardInterrupt:
                if not self._held.claimed:  # stopped while the data loaded: nothing was written
                    raise
                raise self._run.interrupted() from None
            except ConfigError as exc:  # a check of the config against its data: named where it was given
                if exc.path.startswith("executor") and chosen is not run.executor and exc.source is None:
                    exc = exc.with_source("<executor>")  # an executor handed over from Python, not the config's
                raise _named(exc, run) from None
        except BaseException:
            self.close()
            raise
        self.result.stage_seconds["setup"] = round(time.perf_counter() - clock, 6)

    # ------------------------------------------------------------------ lifetime
    def __enter__(self) -> Evaluation:
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Release the executor, the run's judges and the output directory; the results stay readable, no model
        can be added."""
        if not self._closed:
            self._closed = True
            try:
                if self._owns_executor:
                    self._run.executor.close()
            finally:
                try:
                    if self._held.claimed and not self._run.written:  # evaluated nothing: all pending
                        self._run.save()
                    self._run.close()
                finally:
                    self._held.close()

    # ------------------------------------------------------------------ evaluating
    def baseline(self) -> CandidateResult:
        """Evaluate the baseline once (later calls return the same result), timed on its own if no
        candidate has been timed beside it yet."""
        self._check_open()
        self._evaluate_baseline()
        if self._run.timing_runs and not self._run.paired:
            base = self.result.models[self.result.baseline]
            if not any(sub.timing is not None for sub in base.metrics.values()):
                self._guarded(lambda: self._run.time([self._run.config.input_model]))
        return self._view(self.result.baseline)

    def evaluate(self, candidate: ModelConfig | dict[str, Any]) -> CandidateResult:
        """Evaluate one more candidate against the baseline (evaluated first if it was not yet)."""
        self._check_open()
        model = self._candidate(candidate)
        self._evaluate_baseline()
        self._add_candidate(model)

        def work() -> None:
            self._run.evaluate(model)  # saved before and after
            if self._run.timing_runs and self._run.timeable(model.display_name()):  # not stopped, not failed
                self._run.time([self._run.config.input_model, model])
                self._run.save()

        self._guarded(work)
        return self._view(model.display_name())

    def evaluate_many(self, candidates: list[ModelConfig | dict[str, Any]]) -> list[CandidateResult]:
        """Evaluate a batch of proposed candidates at once (on the executor's workers together, when it has
        several), then time them beside the baseline in one interleaved phase; results in the given order."""
        self._check_open()
        models: list[ModelConfig] = []
        for candidate in candidates:
            model = self._candidate(candidate)
            if model.display_name() in {m.display_name() for m in models}:
                raise ConfigError(
                    f"model name '{model.display_name()}' is given twice in the batch; give each model a unique name",
                    path="candidate.name",
                    source=CANDIDATE,
                )
            models.append(model)
        self._evaluate_baseline()
        for model in models:
            self._add_candidate(model)

        def work() -> None:
            self._run.evaluate_many(models)  # saved before and as each finishes
            timed = [m for m in models if self._run.timeable(m.display_name())]
            if self._run.timing_runs and timed:
                self._run.time([self._run.config.input_model, *timed])
                self._run.save()

        self._guarded(work)
        return [self._view(model.display_name()) for model in models]

    def finish_best(self) -> CandidateResult | None:
        """A sequential loop's end with ``finish: best``: the best candidate evaluated again on all the data."""
        self._check_open()
        self._guarded(self._run.finish_best)
        return self._view(self.best) if self.best is not None else None

    def record_failure(self, name: str, error: str) -> CandidateResult:
        """A candidate refused before it could load (a model kind olive-eval cannot evaluate, say): kept in
        results.json as failed, with ``error`` saying why, beside the models that were evaluated."""
        self._check_open()
        if name in self.result.models:
            raise ConfigError(f"model name '{name}' is already used by another model of this session", path="name")
        self.result.models[name] = ModelResult(status="failed", error=error)
        self._run.finish()
        self._run.save()
        return self._view(name)

    def run(self) -> RunResult:
        """The config's own candidates: every model's unit, then one timing phase over all of them."""
        self._check_open()
        result = self._run.result

        def work() -> None:
            clock = time.perf_counter()
            self._evaluate_baseline(save=False)  # its results go out with the next ``running`` write, or below
            pending = [m for m in self._run.config.candidates if result.models[m.display_name()].status == "pending"]
            self._run.evaluate_many(pending, save=False)  # together where the executor can
            self._run.finish_best()  # sequential's ``finish: best``: the best on all the data
            result.stage_seconds["models"] = round(time.perf_counter() - clock, 6)
            if self._run.timing_runs:
                self._run.save(durable=False)  # what the models computed, before the timing rounds
                clock = time.perf_counter()
                self._run.time(self._run.config.models())
                result.stage_seconds["timing"] = round(time.perf_counter() - clock, 6)
            self._run.save()

        self._guarded(work)
        return result

    # ------------------------------------------------------------------ the standing
    @property
    def result(self) -> RunResult:
        """The run so far (what results.json holds)."""
        return self._run.result

    @property
    def config(self) -> RunConfig:
        """The validated config the session runs."""
        return self._run.config

    @property
    def output_dir(self) -> Path:
        """The folder results.json and the instance records are written to."""
        return self._run.out_dir

    @property
    def ranking(self) -> list[str]:
        """Candidates meeting every goal, best first."""
        return list(self.result.ranking)

    @property
    def best(self) -> str | None:
        return self.result.best

    @property
    def pareto(self) -> list[str]:
        """Models no other model dominates on the ranked metrics."""
        return [name for name, model in self.result.models.items() if model.pareto]

    def report(self, out: str | Path | None = None) -> Path:
        """Write report.html beside results.json (or at ``out``) from what results.json and the instance files
        hold now, and return its path: after a run, or between a loop's candidates (needs the ``report`` extra)."""
        from olive_eval.report.html import write_report

        if not self._run.written:  # a session that has evaluated nothing yet
            self._run.save()
        return write_report(self.output_dir, Path(out) if out is not None else None)

    # ------------------------------------------------------------------ helpers
    def _evaluate_baseline(self, save: bool = True) -> None:
        if not self._baseline_done:
            self._guarded(lambda: self._run.evaluate(self._run.config.input_model, save=save))
            self._baseline_done = True

    def _guarded(self, work: Any) -> None:
        """Run ``work`` with third-party log lines in the run's log file; Ctrl-C records the model it stopped and
        raises :class:`RunInterrupted`."""
        try:
            with self._held.log.routed():
                work()
        except KeyboardInterrupt:
            raise self._run.interrupted() from None

    def _check_open(self) -> None:
        if self._closed:
            raise UsageError("the evaluation session is closed; open a new Evaluation to evaluate more models")

    def _view(self, name: str) -> CandidateResult:
        ranking = self.result.ranking
        return CandidateResult(name, self.result.models[name], ranking.index(name) + 1 if name in ranking else None)

    def _add_candidate(self, model: ModelConfig) -> None:
        self._run.add_candidate(model)
        self.result.environment.setdefault("checkers", {})[model.display_name()] = checker_identity(model)

    def _candidate(self, candidate: ModelConfig | dict[str, Any]) -> ModelConfig:
        """A candidate validated as the config's own models are (see :func:`validated_candidate`)."""
        run = self._run.config
        return validated_candidate(candidate, run, set(self.result.models), self._run.pass_data)


def _named(exc: ConfigError, run: RunConfig) -> ConfigError:
    """``exc`` naming the config it is about (the planner raises it with the JSON path only)."""
    return exc if exc.source is not None else exc.with_source(run.source)


def _executor(
    configured: ExecutorConfig, given: str | dict[str, Any] | ExecutorConfig | Executor | None
) -> ExecutorConfig | Executor:
    """The executor the session uses: ``given`` (a type name overrides the config's type only), else the config's."""
    if given is None:
        return configured
    if isinstance(given, str):
        if given == configured.type:
            return configured
        if configured.timeout_s is not None and given in executor_registry:
            given = {"type": given, "timeout_s": configured.timeout_s}
    if isinstance(given, (str, dict)):
        try:
            return executor_config(given)
        except SpecError as exc:
            if isinstance(given, str):  # the CLI's --executor, or a name given in Python: not the config's fault
                raise UsageError(exc.message) from None
            path = ".".join(part for part in ("executor", exc.key) if part)
            raise ConfigError(exc.message, path=path, source="<executor>") from None
        except ValidationError as exc:
            error = from_validation_error(exc)
            path = "executor" if error.path == "(top level)" else f"executor.{error.path}"
            raise ConfigError(error.message, path=path, source="<executor>") from None
    return given
