"""The judge interface: a batch of prompts in, one reply (or one failure) per prompt out.

A judge gives text (``returns: "text"``, the judged metrics' verdicts) or scores (``returns: "score"``, a reward
model's number for a (prompt, response) pair, asked as the tuple): the metric sets which in the spec it plans, and
a source says which it can give (:attr:`JudgeSource.gives`). Scores go through the same cache, batching, timeout
and failures as text; a reply that is not a finite number fails its item as non-text fails a prompt.

A judge *source* turns the ``judge`` spec of a judged metric's ``metric_config`` into a plain
``Callable[[list[str]], list[Any]]`` plus an identity (what judged: a function, a model, its parameters). The
:class:`Judge` around it owns what every source shares: the reply cache (by prompt, within the judge's life), one
batched call for the prompts not cached, the timeout, and turning exceptions and non-text into :class:`JudgeFailure`
for the prompts they hit, so one bad reply fails one example and never the run.

A judge lives as long as whoever built it. In a run, the engine plans the judges its metrics name
(:meth:`JudgeSource.model` says which model a source needs, its paths resolved against the config's folder), loads
that model with the run's context, builds each judge once per spec and closes it with the run
(:mod:`olive_eval.engine.run.judges`); a judged metric receives its :class:`Judge` by spec key and never loads one.

This module sits on the metrics floor (registry, errors, user scripts below it): judged metrics import it, and a
source that needs a runtime (:mod:`olive_eval.judges.model`) imports it only when a spec names it.
"""

from __future__ import annotations

import json
import math
import numbers
import queue
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

from pydantic import Field

from olive_eval.errors import first_line
from olive_eval.registry import Registry
from olive_eval.registry_spec import SpecError, SpecForm
from olive_eval.strict_model import StrictModel

__all__ = [
    "AsksJudges",
    "Judge",
    "JudgeFailure",
    "JudgeModel",
    "JudgeSource",
    "JudgeSpec",
    "JudgeSpecError",
    "Judges",
    "build_judge",
    "judge_key",
    "judge_source_registry",
    "judges_of",
    "parse_spec",
]

BatchCall = Callable[[list[Any]], list[Any]]
OneCall = Callable[[Any], Any]
#: What a judge is asked: a prompt (a text judge), or a (prompt, response) pair (a scoring judge).
Item = str | tuple[str, ...]
#: What a judge gives: ``text`` for the judged metrics, ``score`` (one number per pair) for ``reward``.
Returns = Literal["text", "score"]


@dataclass(frozen=True)
class JudgeFailure:
    """Why the judge gave no text for a prompt: it raised, timed out, or returned something else."""

    message: str


class JudgeSpecError(SpecError):
    """A judge spec is wrong at ``key``, a JSON path below ``judge`` (``model.type``), so the config error can
    name the full path."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__("judge", key, message)


class JudgeSpec(StrictModel):
    """What every judge spec has; a source subclasses it with its own keys (``type`` names the source)."""

    type: str = Field("function", description="The judge source: function (a user's callable) or model")
    timeout: float | None = Field(
        None, gt=0, description="Seconds one judge call may take; past it, the prompts of that call fail"
    )
    cache: bool = Field(True, description="Reuse the reply to a prompt asked before of the same judge")
    returns: Returns = Field(
        "text", description="Set by the metric, not the user: text (a judged metric) or score (reward)"
    )


@dataclass(frozen=True)
class JudgeModel:
    """A model a judge needs, for the engine to load with the run's context: the model's config (paths resolved)
    and the device and execution providers the spec names (None: the run's)."""

    config: Any
    device: str | None = None
    providers: list[tuple[str, dict[str, Any]]] | None = None


class JudgeSource:
    """A registered way of making a judge from a spec (``Spec``)."""

    Spec: ClassVar[type[JudgeSpec]] = JudgeSpec
    #: What the source can give (:data:`Returns`): a spec asking for anything else is a config error at ``type``.
    gives: ClassVar[tuple[str, ...]] = ("text",)

    @classmethod
    def check(cls, spec: JudgeSpec) -> None:
        """Config-time checks (a function missing from its script): raise ValueError with one line."""

    @classmethod
    def model(cls, spec: JudgeSpec, base_dir: Path, allow_download: bool) -> JudgeModel | None:
        """The model the judge runs on, checked when the run is planned: its relative paths resolved against
        ``base_dir`` (the config file's folder), its files checked under the run's download policy (a
        :class:`JudgeSpecError` naming the key). None for a judge that needs no model loaded."""
        return None

    @classmethod
    def build(
        cls, spec: JudgeSpec, model: JudgeModel | None = None, runtime: Any = None
    ) -> tuple[BatchCall | OneCall, bool, dict[str, Any]]:
        """The call, whether it takes a list of prompts (else one prompt), and the judge's identity (JSON-ready,
        recorded in results.json). ``model``: what :meth:`model` gave; ``runtime``: that model, loaded by the
        engine with the run's context."""
        raise NotImplementedError


@runtime_checkable
class AsksJudges(Protocol):
    """A metric's validated config that names judges: the run plans (and loads) each one before it scores."""

    def judge_specs(self) -> dict[str, dict[str, Any]]:
        """Each judge spec the config names, by its JSON path below the ``metric_config``."""
        ...


def _checked(source: type[JudgeSource], spec: JudgeSpec) -> JudgeSpec:
    if spec.returns not in source.gives:
        names = [n for n in judge_source_registry.names() if spec.returns in judge_source_registry.get(n).gives]
        what = "scores" if spec.returns == "score" else "text"
        raise JudgeSpecError(
            "type", f"the {spec.type} source does not give {what}; the sources that do: {', '.join(sorted(names))}"
        )
    source.check(spec)
    return spec


#: Judge sources by ``type``: each module of :mod:`olive_eval.judges` registers its own. A spec is validated by
#: its source's ``Spec`` and checked by the source; pydantic's own errors go up, for the judged metric's config
#: (a pydantic model) to locate below ``judge``.
judge_source_registry: Registry[type[JudgeSource]] = Registry(
    "judge source",
    packages=("olive_eval.judges",),
    group="olive_eval.judge_sources",
    base=JudgeSource,
    form=SpecForm(default="function", params=False, model=lambda source: source.Spec, make=_checked, explain=None),
)


def parse_spec(raw: dict[str, Any]) -> JudgeSpec:
    """The spec validated by its source's ``Spec`` (ValueError ``judge.type: ...`` for an unknown ``type``)."""
    return judge_source_registry.build(raw, "judge")  # type: ignore[no-any-return]


def judge_key(raw: dict[str, Any]) -> str:
    """A spec's identity: sub-types naming equal specs share one judge (one model loaded, one reply cache)."""
    return json.dumps(raw, sort_keys=True, default=str)


@dataclass
class Judge:
    """A judge with its cache; ``calls`` and ``seconds`` count the calls made to the source and their time."""

    call: BatchCall | OneCall
    identity: dict[str, Any]
    batched: bool = False
    timeout: float | None = None
    cache: bool = True
    returns: Returns = "text"
    calls: int = 0
    prompts_sent: int = 0
    seconds: float = 0.0
    _replies: dict[Item, Any] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _worker: _Worker | None = None

    def __call__(self, prompts: list[Item]) -> list[Any]:
        """One reply per prompt (text, or a float for a scoring judge) or its :class:`JudgeFailure`: cached ones
        reused, the rest asked in one call (duplicates once)."""
        with self._lock:
            wanted = list(dict.fromkeys(p for p in prompts if not (self.cache and p in self._replies)))
        fresh = dict(zip(wanted, self._call(wanted), strict=True)) if wanted else {}
        if self.cache:
            with self._lock:
                self._replies.update(fresh)
                return [fresh[p] if p in fresh else self._replies[p] for p in prompts]
        return [fresh[p] for p in prompts]

    def _call(self, prompts: list[Item]) -> list[Any]:
        """A batched judge gets the prompts in one call; any other gets them one by one, so a failure (or a
        timeout) fails the prompt it hit and no other."""
        if self.batched:
            return self._call_many(prompts)
        return [self._call_many([prompt], one=True)[0] for prompt in prompts]

    def _call_many(self, prompts: list[Item], one: bool = False) -> list[Any]:
        self.calls += 1
        self.prompts_sent += len(prompts)
        start = time.perf_counter()
        try:
            replies = [self._timed(prompts[0])] if one else self._timed(prompts)
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            failure = JudgeFailure(_describe(exc, self.timeout))
            return [failure] * len(prompts)
        finally:
            self.seconds += time.perf_counter() - start
        if not isinstance(replies, list | tuple) or len(replies) != len(prompts):
            got = f"{len(replies)} replies" if isinstance(replies, list | tuple) else type(replies).__name__
            return [JudgeFailure(f"the judge returned {got} for {len(prompts)} prompts")] * len(prompts)
        return [_reply(r) if self.returns == "text" else _score(r) for r in replies]

    def _timed(self, prompts: Any) -> Any:
        if self.timeout is None:
            return self.call(prompts)
        if self._worker is None:
            self._worker = _Worker()
        done, box = self._worker.submit(self.call, prompts)
        if not done.wait(self.timeout):
            self._worker.stop()  # it is stuck in the judge: it ends when the call does; the next call gets a new one
            self._worker = None
            raise TimeoutError(f"the judge took longer than the timeout of {self.timeout:g} s")
        if "err" in box:
            raise box["err"]
        return box["out"]

    def close(self) -> None:
        """Stop the timeout's worker thread and drop the cached replies (the judge's model is the engine's)."""
        if self._worker is not None:
            self._worker.stop()
            self._worker = None
        with self._lock:
            self._replies.clear()


#: The judges a metric may ask, by :func:`judge_key` of their spec (the run's, or the caller's).
Judges = Mapping[str, Judge]


def build_judge(spec: JudgeSpec, model: JudgeModel | None = None, runtime: Any = None) -> Judge:
    """The judge of a parsed spec; where its source needs a model (:meth:`JudgeSource.model`), on ``runtime``, that
    model loaded."""
    call, batched, identity = judge_source_registry.get(spec.type).build(spec, model, runtime)
    return Judge(call, identity, batched=batched, timeout=spec.timeout, cache=spec.cache, returns=spec.returns)


def judges_of(*specs: dict[str, Any]) -> dict[str, Judge]:
    """Judges built from their specs outside a run, by key (sources that need no model, such as a function): bound
    to several metrics (``metric.bind_judges``), they share their replies. In a run the engine builds them."""
    return {judge_key(raw): build_judge(parse_spec(raw)) for raw in specs}


class _Worker:
    """One daemon thread that runs the judge's calls, so a timeout can give up on a call (a hung judge cannot hold
    the process at exit) without the cost of a thread per call."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[[Any], Any], Any, threading.Event, dict[str, Any]] | None] = (
            queue.SimpleQueue()
        )
        threading.Thread(target=self._run, name="olive-eval-judge", daemon=True).start()

    def submit(self, call: Callable[[Any], Any], arg: Any) -> tuple[threading.Event, dict[str, Any]]:
        done, box = threading.Event(), {}
        self._jobs.put((call, arg, done, box))
        return done, box

    def stop(self) -> None:
        self._jobs.put(None)

    def _run(self) -> None:
        while (job := self._jobs.get()) is not None:
            call, arg, done, box = job
            try:
                box["out"] = call(arg)
            except BaseException as exc:
                box["err"] = exc
            done.set()


def _reply(reply: Any) -> str | JudgeFailure:
    """Text, or why not: a batch judge may put an exception in place of the reply to one prompt that failed."""
    if isinstance(reply, str):
        return reply
    if isinstance(reply, BaseException):
        return JudgeFailure(f"the judge failed on this prompt: {type(reply).__name__}: {first_line(reply)}")
    return JudgeFailure(f"the judge returned {type(reply).__name__}, not text")


def _score(reply: Any) -> float | JudgeFailure:
    """A finite number, or why not (an exception in place of one item's score fails that item alone)."""
    if isinstance(reply, BaseException):
        return JudgeFailure(f"the judge failed on this item: {type(reply).__name__}: {first_line(reply)}")
    if isinstance(reply, bool) or not isinstance(reply, numbers.Real):
        return JudgeFailure(f"the judge returned {type(reply).__name__}, not a number")
    if not math.isfinite(float(reply)):
        return JudgeFailure(f"the judge returned {float(reply)}, not a finite number")
    return float(reply)


def _describe(exc: BaseException, timeout: float | None) -> str:
    if isinstance(exc, TimeoutError) and timeout is not None and "timeout" in str(exc):
        return str(exc)
    return f"the judge raised {type(exc).__name__}: {first_line(exc)}"
