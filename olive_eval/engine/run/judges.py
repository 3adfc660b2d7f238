"""The run's judges: planned with the run, loaded with its context, closed with it.

:func:`plan_judges` collects every judge spec the run's metrics name (a sub-type's validated ``metric_config``
says, through :class:`~olive_eval.judges.base.AsksJudges`), once per spec, and checks each against the run: a
model judge's paths are resolved against the config file's folder and its files checked under the run's download
policy, so a missing folder or a model that would need a download is a config error before any model loads.

:class:`RunJudges` is what a run (or a worker's share of it) holds: each judge built the first time a metric asks
it, its model loaded with the run's context (the run's device and execution providers where the spec names none,
the run's download policy), shared by every sub-type and every model the holder scores, and closed with the run.
Metrics receive it as a mapping from spec key to :class:`~olive_eval.judges.base.Judge`; nothing outlives it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from olive_eval.config.run import RunConfig
from olive_eval.engine.run.context import RunContext
from olive_eval.errors import ConfigError, EvaluationError, OliveEvalError, first_line
from olive_eval.judges.base import (
    AsksJudges,
    Judge,
    JudgeModel,
    JudgeSpec,
    JudgeSpecError,
    build_judge,
    judge_key,
    judge_source_registry,
    parse_spec,
)
from olive_eval.runtimes.base import Runtime
from olive_eval.runtimes.providers import device_providers


@dataclass(frozen=True)
class PlannedJudge:
    """A judge of the run: its spec and, for a source that runs a model, the model the engine loads for it."""

    spec: JudgeSpec
    model: JudgeModel | None = None


def plan_judge(raw: dict[str, object], base_dir: Path, allow_download: bool) -> PlannedJudge:
    """One judge spec checked against the run (a :class:`JudgeSpecError` naming the key below the spec)."""
    spec = parse_spec(raw)  # type: ignore[arg-type]
    return PlannedJudge(spec, judge_source_registry.get(spec.type).model(spec, base_dir, allow_download))


def plan_judges(run: RunConfig) -> dict[str, PlannedJudge]:
    """Every judge the run's metrics name, by spec key; a wrong one is a :class:`ConfigError` at its JSON path."""
    base_dir = run.source_dir or Path.cwd()
    metrics_key = "evaluator.metrics" if run.evaluator is not None else "metrics"
    planned: dict[str, PlannedJudge] = {}
    for i, metric in enumerate(run.all_metrics):
        for j, sub in enumerate(metric.sub_types):
            config = metric.parsed_config(sub)
            if not isinstance(config, AsksJudges):
                continue
            for where, raw in config.judge_specs().items():
                key = judge_key(raw)
                if key in planned:
                    continue
                try:
                    planned[key] = plan_judge(raw, base_dir, run.allow_download)
                except JudgeSpecError as exc:
                    path = f"{metrics_key}[{i}].sub_types[{j}].metric_config.{where}.{exc.key}"
                    raise ConfigError(exc.message, path=path) from None
    return planned


class RunJudges(Mapping[str, Judge]):
    """The planned judges, by spec key, each built on first use with the run's context; :meth:`close` closes their
    models and forgets their replies. The holder's owner closes it: the run, or a worker after its unit."""

    def __init__(self, planned: Mapping[str, PlannedJudge], context: RunContext) -> None:
        self._planned = dict(planned)
        self._context = context
        self._built: dict[str, Judge] = {}
        self._failed: dict[str, EvaluationError] = {}
        self._runtimes: list[Runtime] = []
        self._lock = threading.Lock()

    def __getitem__(self, key: str) -> Judge:
        with self._lock:
            if key in self._built:
                return self._built[key]
            if key in self._failed:  # a model that did not load fails every metric asking it, loaded once
                raise self._failed[key]
            if key not in self._planned:
                raise EvaluationError(f"a metric asked a judge the run did not plan: {key}")
            self._built[key] = self._build(key, self._planned[key])
            return self._built[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._planned)

    def __len__(self) -> int:
        return len(self._planned)

    def _build(self, key: str, planned: PlannedJudge) -> Judge:
        runtime = None
        try:
            if planned.model is not None:
                runtime = self._load(planned.model)
            judge = build_judge(planned.spec, planned.model, runtime)
        except Exception as exc:
            if runtime is not None:
                runtime.close()
            self._failed[key] = _build_error(planned, exc)
            raise self._failed[key] from exc
        if runtime is not None:
            self._runtimes.append(runtime)
        return judge

    def _load(self, model: JudgeModel) -> Runtime:
        """The judge's model with the run's context: the spec's device and providers where it names them."""
        context = self._context
        device = model.device or context.device
        if model.providers is not None:
            providers = model.providers
        elif device == context.device:
            providers = list(context.providers)
        else:
            providers = device_providers(device)
        return replace(context, device=device, providers=tuple(providers)).load(model.config)  # type: ignore[arg-type]

    def close(self) -> None:
        """Close every judge and its model; a judge asked after this is built (and loaded) again."""
        with self._lock:
            judges, runtimes = list(self._built.values()), self._runtimes
            self._built, self._failed, self._runtimes = {}, {}, []
        for judge in judges:
            judge.close()
        for runtime in runtimes:
            runtime.close()


def _build_error(planned: PlannedJudge, exc: Exception) -> EvaluationError:
    """Why the judge could not be built, as the failed metric says it."""
    what = f"judge model '{planned.model.config.display_name()}'" if planned.model is not None else "the judge"
    why = str(exc) if isinstance(exc, OliveEvalError) else f"{type(exc).__name__}: {first_line(exc)}"
    return EvaluationError(f"{what} could not be built: {why}")
