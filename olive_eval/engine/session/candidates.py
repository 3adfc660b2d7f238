"""A candidate a session is handed: validated as the config's own models are, and its standing once evaluated.

An optimization loop proposes candidates as dicts or model configs while the session runs
(:class:`~olive_eval.engine.session.session.Evaluation`); each is checked here before anything loads: its type's schema,
a name no other model of the session has, the files it names, and that its outputs fit the run's passes. An error
names the candidate (``<candidate>``), not the config.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from olive_eval.config import RunConfig
from olive_eval.config.errors import from_validation_error
from olive_eval.config.loader import check_model_references
from olive_eval.config.run import Model
from olive_eval.engine.run.preflight import check_outputs
from olive_eval.errors import ConfigError
from olive_eval.records.results import ModelResult, SubMetricResult
from olive_eval.runtimes.base import ModelConfig, check_name

#: Where a candidate's config error is said to come from.
CANDIDATE = "<candidate>"


@dataclass(frozen=True)
class CandidateResult:
    """One model's standing in the session: its results, and its place in the ranking (1 = best)."""

    name: str
    model: ModelResult
    rank: int | None

    @property
    def goals_met(self) -> bool | None:
        return self.model.goals_met

    @property
    def metrics(self) -> dict[str, SubMetricResult]:
        return self.model.metrics

    @property
    def status(self) -> str:
        return self.model.status

    @property
    def error(self) -> str | None:
        return self.model.error

    @property
    def early_stopped(self) -> str | None:
        """The goal that stopped the candidate before its expensive metrics, if one did."""
        return self.model.early_stopped


def validated_candidate(
    candidate: ModelConfig | dict[str, Any], run: RunConfig, taken: set[str], data_configs: list[str]
) -> ModelConfig:
    """A candidate validated as the config's own models are: its type's schema, a name not in ``taken``, its
    files, its outputs against the passes over ``data_configs``."""
    if isinstance(candidate, dict):
        try:
            model = TypeAdapter(Model).validate_python(candidate)
        except ValidationError as exc:
            error = from_validation_error(exc)
            path = "candidate" if error.path == "(top level)" else f"candidate.{error.path}"
            raise ConfigError(error.message, path=path, source=CANDIDATE) from None
        model.resolve_paths(Path.cwd())
    elif isinstance(candidate, ModelConfig):
        model = candidate.model_copy(deep=True)
    else:
        raise ConfigError(
            f"a candidate is a model config dict or a ModelConfig, not {type(candidate).__name__}",
            path="candidate",
            source=CANDIDATE,
        )
    name = model.display_name()
    try:
        check_name(name)
    except ValueError as exc:
        raise ConfigError(str(exc), path="candidate.name", source=CANDIDATE) from None
    if name in taken:
        raise ConfigError(
            f"model name '{name}' is already used by another model of this session; give each model a unique name",
            path="candidate.name",
            source=CANDIDATE,
        )
    try:
        check_model_references(model, "candidate", run.allow_download)
    except ConfigError as exc:
        raise exc.with_source(CANDIDATE) from None
    check_outputs(run, data_configs, [("candidate", model)])
    return model
