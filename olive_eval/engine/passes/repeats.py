"""Repeats in a pass: each example generated k times, repeat r seeded with ``repeat_seed + r``; and how a metric
with a score reduction (``mean``, ``pass_at_k``) scores every sample.

The pass side wraps the runtime and the post-process of a data config whose metrics ask for repeats: the
runtime is called k times per batch, each call after seeding Python's, NumPy's and (when loaded) torch's global
generators with the repeat's seed, and with the seed in the batch column ``repeat_seed`` for a PythonModel that
keeps its own generator; a metric that gives ``"repeats": 1`` gets that one seeded generation, column included.
The post-process then makes each example's prediction a
:class:`~olive_eval.data.filters.Repeats` of its k predictions. The pass samples as many repeats as its metrics
ask for; a metric with fewer reads the first ones (the same samples, so pass@1 and pass@8 agree on them).

Sampling must be on (``generation_kwargs: {"do_sample": true}`` for a transformers model): when every example's
repeats come out identical, the pass says so in a warning: greedy decoding repeats itself, and a sampling model
that is very confident (or too cold) may too.
"""

from __future__ import annotations

import dataclasses
import random
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from olive_eval.config.repeats import MAX_GENERATIONS
from olive_eval.data.batch import Batch, Column, Outputs
from olive_eval.data.filters import Repeats
from olive_eval.errors import ConfigError

if TYPE_CHECKING:
    from olive_eval.config.metric import MetricConfig
    from olive_eval.config.run import RunConfig
    from olive_eval.data.sources import Source

#: The batch column holding the seed of the repeat being generated (one value per example).
SEED_COLUMN = "repeat_seed"


def seed_generators(seed: int) -> None:
    """Seed the global generators a model samples from: Python's, NumPy's, and torch's when it is loaded."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(seed)


@dataclasses.dataclass(frozen=True)
class RepeatPlan:
    """How many repeats a pass generates, and the seed of the first."""

    repeats: int
    seed: int

    @classmethod
    def of(cls, metrics: Sequence[Any]) -> RepeatPlan | None:
        """The plan of a pass whose metrics are ``metrics`` (None: one unseeded generation). A metric that gives
        ``repeats`` (1 too) asks for seeded generation; the config holds one ``repeat_seed`` per pass
        (:func:`olive_eval.config.repeats.check_shared_seeds`)."""
        asking = [m for m in metrics if getattr(m, "repeats", None) is not None]
        if not asking:
            return None
        return cls(max(m.repeats for m in asking), asking[0].repeat_seed)

    def seeds(self) -> list[int]:
        return [self.seed + r for r in range(self.repeats)]


class Samples(Repeats):
    """The k generations a pass with repeats made of one example (a model may return a :class:`Repeats` itself;
    only these are cut to a metric's own ``repeats``)."""


class RepeatOutputs(dict):  # type: ignore[type-arg]
    """The outputs of every repeat of one batch, in repeat order (the first repeat's outputs as the dict)."""

    def __init__(self, each: list[Outputs]) -> None:
        super().__init__(each[0])
        self.each = each


class RepeatingRuntime:
    """A runtime called once per repeat, seeded; every other attribute is the runtime's own."""

    def __init__(self, runtime: Any, plan: RepeatPlan) -> None:
        self._runtime, self._plan = runtime, plan

    def predict(self, batch: Batch) -> RepeatOutputs:
        each = []
        for seed in self._plan.seeds():
            seed_generators(seed)
            columns = {**batch.columns, SEED_COLUMN: np.full(batch.size, seed, np.int64)}
            each.append(self._runtime.predict(dataclasses.replace(batch, columns=columns)))
        return RepeatOutputs(each)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._runtime, name)


#: The warning when every example's repeats came out identical, by whether the model's settings sample.
IDENTICAL = {
    False: "examples whose {k} repeats were all identical, as greedy decoding gives (sample: do_sample true)",
    True: "examples whose {k} repeats were all identical although the model samples (do_sample true): a confident "
    "model, or a temperature too low; raise the temperature for repeats that differ",
    None: "examples whose {k} repeats were all identical",
}


def samples(model_config: Any) -> bool | None:
    """Whether the model's generation settings sample: ``generation_kwargs.do_sample`` (a GenAIModel's
    ``search_options`` last, as it passes them); None where the config does not say (a PythonModel's generator)."""
    kwargs = getattr(model_config, "generation_kwargs", None)
    if kwargs is None:
        return None
    if not isinstance(kwargs, dict):
        kwargs = kwargs.model_dump(exclude_none=True)
    options = {**kwargs, **getattr(model_config, "search_options", {})}
    return bool(options.get("do_sample", False))


class RepeatingPost:
    """The post-process of each repeat's outputs, joined into one :class:`Repeats` per example; it notes when every
    example's repeats so far are identical."""

    def __init__(self, post: Any, plan: RepeatPlan, notes: dict[str, int], sampling: bool | None = None) -> None:
        self._post, self._plan, self._notes = post, plan, notes
        self._note = IDENTICAL[sampling].format(k=plan.repeats)
        # examples so far, all with identical repeats; None once one differed (or with one repeat: nothing to compare)
        self._identical: int | None = 0 if plan.repeats > 1 else None

    def apply(self, outputs: Outputs, batch: Batch, context: Any) -> list[Samples]:
        each = outputs.each if isinstance(outputs, RepeatOutputs) else [outputs]
        per_repeat = [list(self._post.apply(out, batch, context)) for out in each]
        joined = [Samples(p[i] for p in per_repeat) for i in range(batch.size)]
        self._count_identical(joined)
        return joined

    def raw(self, outputs: Outputs) -> Column:
        """The first repeat's raw output (what the non-finite check and ``logits`` read)."""
        return self._post.raw(outputs.each[0] if isinstance(outputs, RepeatOutputs) else outputs)

    def _count_identical(self, joined: list[Samples]) -> None:
        if self._identical is None:
            return
        if all(all(_same(r[0], p) for p in r[1:]) for r in joined):
            self._identical += len(joined)
            self._notes[self._note] = self._identical
        else:
            self._identical = None
            self._notes.pop(self._note, None)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._post, name)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(a, b))
    return bool(a == b)


def with_repeats(runtime: Any, view: Any, metrics: Sequence[Any], model_config: Any = None) -> tuple[Any, Any]:
    """The runtime and data view of a pass, repeating when a metric of the pass asks for repeats; identical repeats
    are explained by whether ``model_config``'s generation settings sample."""
    plan = RepeatPlan.of(metrics)
    if plan is None:
        return runtime, view
    post = RepeatingPost(view.post, plan, view.context.notes, samples(model_config))
    return RepeatingRuntime(runtime, plan), dataclasses.replace(view, post=post)


# --------------------------------------------------------------------------------------------- scoring side


def first_samples(predictions: Sequence[Any], repeats: int) -> list[Any]:
    """Each example's first ``repeats`` samples of the pass (a plain prediction when ``repeats`` is 1)."""
    out: list[Any] = []
    for entry in predictions:
        if isinstance(entry, Samples):
            out.append(entry[0] if repeats == 1 else Repeats(entry[:repeats]))
        else:
            out.append(entry)
    return out


def check_reduced(predictions: Sequence[Any], metric: str) -> None:
    """ValueError when an example still holds several samples where the metric scores one prediction."""
    for index, entry in enumerate(predictions):
        if isinstance(entry, Repeats):
            raise ValueError(
                f"metric '{metric}': example {index} still holds {len(entry)} samples after the filters; reduce them "
                "('reduction': take_first, majority_vote, mean or pass_at_k)"
            )


def flatten(fields: dict[str, Column], reads: Sequence[str]) -> tuple[tuple[Column, ...], np.ndarray]:
    """The fields ``reads`` names with one row per sample (other fields repeated), and the samples per example."""
    predictions = fields["prediction"]
    counts = np.array([len(p) if isinstance(p, Repeats) else 1 for p in predictions], np.int64)
    if np.any(counts == 0):
        raise ValueError(f"example {int(np.argmin(counts))} has no samples (an empty Repeats)")
    rows = np.repeat(np.arange(len(predictions)), counts)
    flat_predictions = [s for p in predictions for s in (p if isinstance(p, Repeats) else [p])]
    columns: list[Column] = []
    for name in reads:
        if name == "prediction":
            columns.append(flat_predictions)
        else:
            column = fields[name]
            columns.append(column[rows] if isinstance(column, np.ndarray) else [column[i] for i in rows.tolist()])
    return tuple(columns), counts


# --------------------------------------------------------------------------------------------- plan side


def _rows(source: Source) -> int:
    """The rows of a data source, read through where it does not say (a JSON lines file)."""
    known = source.num_rows
    return known if known is not None else sum(chunk.num_rows for chunk in source.chunks())


class PassOfMetrics(Protocol):
    """A prediction pass as far as its generations are counted: its data config and its metrics."""

    data_config: str
    metrics: list[MetricConfig]


def check_generations(run: RunConfig, passes: Sequence[PassOfMetrics], source_of: Callable[[str], Source]) -> None:
    """Each pass of repeats generates at most :data:`MAX_GENERATIONS` samples (repeats x examples), every one held
    until the pass is scored: a ConfigError at the metric's ``repeats`` when the data is opened, before any model
    loads, instead of the process killed for memory."""
    metrics_key = "evaluator.metrics" if run.evaluator is not None else "metrics"
    for job in passes:
        plan = RepeatPlan.of(job.metrics)
        source = source_of(job.data_config)
        if plan is None or plan.repeats == 1 or source.needs_model:
            continue
        examples = _rows(source)
        if plan.repeats * examples > MAX_GENERATIONS:
            metric = max(job.metrics, key=lambda m: m.repeats or 0)
            raise ConfigError(
                f"metric '{metric.name}' asks for {plan.repeats} repeats of the {examples} examples of data config "
                f"'{job.data_config}': {plan.repeats * examples} samples, above the {MAX_GENERATIONS} a pass may "
                "hold; lower repeats, or set load_dataset_config.limit",
                path=f"{metrics_key}[{run.all_metrics.index(metric)}].repeats",
            )
