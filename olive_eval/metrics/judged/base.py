"""What every judged metric shares: the config (the judge spec, prompt overrides), asking the judge in batches,
and per-example statistics that keep an excluded example out of the value without scoring it 0.

Statistics are map/reduce rows ``[score, scored, unparseable, failed]``: a scored example is ``[s, 1, 0, 0]``, an
example whose reply was not a JSON verdict ``[0, 0, 1, 0]``, one whose judge call failed (raised, timed out,
returned non-text) ``[0, 0, 0, 1]``. The value is ``sum(score) / sum(scored)``, so intervals and paired goals
resample examples and the excluded ones stay excluded in every resample.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from string import Template
from typing import Any, ClassVar, TypeVar

import numpy as np
from pydantic import Field, field_validator
from pydantic_core import PydanticCustomError

from olive_eval.judges.base import Judge, JudgeFailure, Judges, JudgeSpecError, judge_key, judges_of, parse_spec
from olive_eval.metrics.base import Kind, Metric, Score
from olive_eval.metrics.judged.parsing import Unparseable, parse_items, parse_verdicts
from olive_eval.metrics.judged.prompts import PROMPTS_VERSION, TEMPLATES, check_overrides, digest
from olive_eval.registry import RegistryError
from olive_eval.strict_model import StrictModel

__all__ = ["Failed", "Issue", "JudgedConfig", "JudgedMetric"]

log = logging.getLogger("olive_eval.judged")
T = TypeVar("T")
#: How many failure messages results.json keeps per sub-type.
KEEP_MESSAGES = 5


@dataclass(frozen=True)
class Failed:
    """The example could not be judged: the judge raised, timed out or returned non-text, or the input is bad."""

    message: str


Issue = Failed | Unparseable


class JudgedConfig(StrictModel):
    """metric_config of every judged sub-type."""

    judge: dict[str, Any] = Field(
        description='The judge: {"function": NAME, "user_script": PATH} or {"type": "model", "model": {...}}'
    )
    prompts: dict[str, str] = Field(default_factory=dict, description="Replacement prompt templates, by name")

    @field_validator("judge")
    @classmethod
    def _judge(cls, value: dict[str, Any]) -> dict[str, Any]:
        if value.get("returns", "text") != "text":
            message = "a judged metric's judge returns text (scores are for reward)"
            raise PydanticCustomError("nested", "{message}", {"subpath": "returns", "message": message})
        try:
            parse_spec(value)
        except RegistryError as exc:
            raise ValueError(f"judge.type: {exc}") from None
        except JudgeSpecError as exc:  # located below judge: the config error names the full JSON path
            raise PydanticCustomError("nested", "{message}", {"subpath": exc.key, "message": exc.message}) from None
        return value

    def judge_specs(self) -> dict[str, dict[str, Any]]:
        """The judge the run plans and loads for this sub-type (:class:`olive_eval.judges.base.AsksJudges`)."""
        return {"judge": self.judge}

    @field_validator("prompts")
    @classmethod
    def _prompts(cls, value: dict[str, str]) -> dict[str, str]:
        check_overrides(value)
        return value


def first_issue(*parts: Any) -> Issue | None:
    """A failure before an unparseable reply: the example is failed if any of its calls failed."""
    issues = [p for p in parts if isinstance(p, Failed | Unparseable)]
    return next((p for p in issues if isinstance(p, Failed)), issues[0] if issues else None)


class JudgedMetric(Metric):
    """Base of the judged sub-types. A subclass sets ``reads`` and implements :meth:`judge_examples`."""

    kind = Kind.MAP_REDUCE
    Config: ClassVar[type[StrictModel]] = JudgedConfig
    #: The templates the sub-type uses (recorded with their hashes).
    uses: ClassVar[tuple[str, ...]] = ()

    #: The judges the metric was handed: working objects, neither cached nor pickled with what it learnt.
    transient = ("_judges",)

    def __init__(self, config: StrictModel | None = None, aggregation: str | None = None) -> None:
        super().__init__(config, aggregation)
        # Plain attributes only: the run's cache stores them with the evidence (engine/cache/evidence_store.py).
        self._seen = 0
        self._identity = ""  # the judge's identity, as JSON, once it has been asked
        self._messages = ""  # the first KEEP_MESSAGES failure messages, one a line
        self._kept = 0
        self._judges: Judges | None = None

    def __getstate__(self) -> dict[str, Any]:
        """Without the judges: a shard's or a child's metric travels back as what it learnt."""
        return {**vars(self), "_judges": None}

    # -- asking -------------------------------------------------------------------------------------------------
    def bind_judges(self, judges: Judges) -> None:
        self._judges = judges

    @property
    def judge(self) -> Judge:
        """The judge of the spec: the run's, shared by every sub-type with the same spec. A metric used outside a
        run, bound to no judges, builds its own from the spec (a function judge; a model judge needs a run)."""
        spec = self.judge_spec()
        if self._judges is None:
            self._judges = judges_of(spec)
        judge = self._judges[judge_key(spec)]
        if not self._identity:
            self._identity = json.dumps(judge.identity, sort_keys=True, default=str)
        return judge

    def judge_identity(self) -> dict[str, Any] | None:
        """What judged (results.json records it), once the judge has been asked."""
        return json.loads(self._identity) if self._identity else None

    def failure_messages(self) -> list[str]:
        """The first :data:`KEEP_MESSAGES` failure messages, as logged."""
        return self._messages.split("\n") if self._messages else []

    def judge_spec(self) -> dict[str, Any]:
        """The spec of the judge the metric asks (as planned: the key the run's judges are found by)."""
        return self.config.judge  # type: ignore[attr-defined,no-any-return]

    def template(self, name: str) -> str:
        return self.config.prompts.get(name, TEMPLATES[name])  # type: ignore[attr-defined]

    def prompt(self, name: str, **fields: Any) -> str:
        """The template filled in; lists (statements, contexts) go in as JSON lists, with ``$count``."""
        values = {k: json.dumps(v, ensure_ascii=False) if isinstance(v, list) else str(v) for k, v in fields.items()}
        if isinstance(fields.get("items"), list):
            values["count"] = str(len(fields["items"]))
        return Template(self.template(name)).safe_substitute(values)

    def ask(self, prompts: Sequence[str | None], parse: Callable[[str], T | Unparseable]) -> list[T | Issue | None]:
        """The parsed reply to each prompt (None where the prompt is None), asked of the judge in one batch."""
        wanted = [p for p in prompts if p is not None]
        replies = iter(self.judge(wanted)) if wanted else iter(())
        out: list[T | Issue | None] = []
        for p in prompts:
            if p is None:
                out.append(None)
                continue
            reply = next(replies)
            out.append(Failed(reply.message) if isinstance(reply, JudgeFailure) else parse(reply))
        return out

    def extract(self, texts: Sequence[str | None], kind: str) -> list[list[str] | Issue | None]:
        """The statements, claims or opinions of each text."""
        return self.ask(
            [None if t is None else self.prompt(kind, text=t) for t in texts], lambda r: parse_items(r, kind)
        )

    def verdicts(self, jobs: Sequence[tuple[str, dict[str, Any]] | None]) -> list[list[bool] | Issue | None]:
        """One verdict per item of each job ``(template, fields)``; a job with no items is ``[]``, unasked."""
        prompts: list[str | None] = []
        counts: list[int] = []
        for job in jobs:
            items = None if job is None else job[1]["items"]
            prompts.append(None if not items else self.prompt(job[0], **job[1]))  # type: ignore[index]
            counts.append(len(items) if items else 0)
        parsed = self.ask(prompts, lambda r: r)  # parse per prompt below: the count differs
        out: list[list[bool] | Issue | None] = []
        for job, reply, count in zip(jobs, parsed, counts, strict=True):
            if job is None:
                out.append(None)
            elif reply is None:
                out.append([])
            elif isinstance(reply, Failed):
                out.append(reply)
            else:
                out.append(parse_verdicts(reply, count))  # type: ignore[arg-type]
        return out

    # -- scoring ------------------------------------------------------------------------------------------------
    def judge_examples(self, *columns: list[Any]) -> list[float | Issue]:
        """One score (or the issue that excludes it) per example."""
        raise NotImplementedError

    def statistics(self, *fields: Any) -> np.ndarray:
        columns = [list(f) if not isinstance(f, list) else f for f in fields]
        n = len(columns[0]) if columns else 0
        start, self._seen = self._seen, self._seen + n
        rows = np.zeros((n, 4), dtype=np.float64)
        if n == 0:
            return rows
        for i, result in enumerate(self.judge_examples(*columns)):
            if isinstance(result, Unparseable | Failed):
                unparseable = isinstance(result, Unparseable)
                rows[i, 2 if unparseable else 3] = 1
                what = "excluded: the judge's reply is not a JSON verdict" if unparseable else "failed"
                message = f"{self.name}, example {start + i}: {what}: {result.message}"
                log.warning(message)
                if self._kept < KEEP_MESSAGES:
                    self._messages += ("\n" if self._messages else "") + message
                    self._kept += 1
            else:
                rows[i, 0], rows[i, 1] = float(result), 1
        return rows

    def concat_statistics(self, parts: list[np.ndarray]) -> np.ndarray:
        return np.concatenate(parts, axis=0) if parts else np.zeros((0, 4))

    def finalize_totals(self, totals: np.ndarray) -> np.ndarray:
        totals = np.asarray(totals, dtype=np.float64).reshape(-1, 4)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(totals[:, 1] > 0, totals[:, 0] / np.maximum(totals[:, 1], 1), np.nan)

    def instance_scores(self, statistics: np.ndarray) -> np.ndarray | None:
        return self.finalize_totals(statistics)

    def reduce(self, statistics: np.ndarray) -> Score:
        rows = np.asarray(statistics, dtype=np.float64).reshape(-1, 4)
        totals = rows.sum(axis=0)
        value = float(self.finalize_totals(totals[None])[0])
        details = self.describe(rows, totals)
        if totals[1] == 0:
            why = "no example was scored" if len(rows) else "no examples to score"
            if len(rows):
                why += f" ({int(totals[2])} replies were not JSON verdicts, {int(totals[3])} judge calls failed)"
            return Score(float("nan"), undefined=why, details=details)
        return Score(value, details=details)

    def describe(self, rows: np.ndarray, totals: np.ndarray) -> dict[str, Any]:
        """What results.json records beside the value: the judge, the prompts, and what was left out and why."""
        return {
            "judge": json.loads(self._identity) if self._identity else None,
            "prompts": {
                "version": PROMPTS_VERSION,
                **{name: digest(self.template(name)) for name in self.uses},
                **({"overridden": sorted(self.config.prompts)} if self.config.prompts else {}),  # type: ignore[attr-defined]
            },
            "examples": len(rows),
            "scored": int(totals[1]),
            "unparseable": int(totals[2]),
            "failed": int(totals[3]),
            **({"messages": self._messages.split("\n")} if self._messages else {}),
        }


# -- inputs ---------------------------------------------------------------------------------------------------------
def text_of(value: Any, what: str) -> str | Failed:
    """One text (a one-element list counts), or why the example has none."""
    if isinstance(value, list | tuple | np.ndarray) and len(value) == 1:
        value = value[0]
    if isinstance(value, np.str_ | str):
        return str(value)
    return Failed(f"{what} is {type(value).__name__}, not text")


def texts_of(value: Any, what: str) -> list[str] | Failed:
    """A list of texts (a single text is a list of one), or why the example has none."""
    if isinstance(value, str | np.str_):
        return [str(value)]
    if isinstance(value, list | tuple | np.ndarray) and all(isinstance(v, str | np.str_) for v in value):
        if len(value) == 0:
            return Failed(f"{what} is empty")
        return [str(v) for v in value]
    return Failed(f"{what} is {type(value).__name__}, not a text or a list of texts")
