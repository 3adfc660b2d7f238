"""Metric filters: small registered steps applied to a metric's predictions before it scores them.

The model is lm-evaluation-harness's ``filter_list``. A metric config lists
``"filters": [{"type": "regex", "pattern": "#### (\\-?[0-9\\.\\,]+)"}, {"type": "take_first"}]`` (Olive's
``{"type": ..., "params": {...}}`` form is accepted too), and :func:`apply_filters` runs them in order.

Data shape: ``predictions`` holds one entry per example. An entry is one prediction (usually a string), or a
:class:`Repeats` holding several predictions of that example (several generations, for pass@k and maj@k).
Per-prediction filters (``regex``, ``lowercase``, ``uppercase``, ``strip``, ``remove_punctuation``, ``map``,
user functions, and any text transform of :mod:`olive_eval.transforms` by its name) apply to every prediction
inside a Repeats and keep its length; ``take_first`` and ``majority_vote`` turn a Repeats into one prediction and
leave a single prediction as it is.

A filter may take the examples' rows too, as lm-eval's ``apply(self, resps, docs)`` does: a Filter subclass whose
``apply(self, predictions, docs)`` takes a second argument gets ``docs``, one dict per example of that example's
data columns (what the pre-process leaves, by name; not the pass's own fields such as ``logits``); a function
filter with a parameter named ``doc`` is called ``f(prediction, doc=row)`` with its example's row. The predictions
keep olive-eval's shape (one entry per example, a Repeats for several), not lm-eval's list of lists.

This module is the interface, the registry, the adapters (a user's function, a text transform) and the builder;
the built-in filters are :mod:`olive_eval.data.builtin_filters`, imported when one is looked up.

Where olive-eval differs from lm-evaluation-harness, on purpose:
- ``regex`` with a ``group_select`` beyond the matches found gives ``fallback`` (lm-eval raises IndexError);
  a prediction that is not a string is a TypeError naming the example (lm-eval reads it as ``""``).
- ``map``'s ``default: null`` keeps the prediction unchanged (lm-eval maps it to None).
- ``majority_vote`` gives the winning prediction itself, not a one-element list, so lm-eval's
  ``regex, majority_vote, take_first`` chain pastes unchanged (``take_first`` leaves it as it is).
"""

from __future__ import annotations

import inspect
import re  # noqa: F401  (tests patch ``filters.re.compile`` to prove the regex is compiled at build time)
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, TypeVar

from olive_eval.registry import Registry
from olive_eval.registry_function import FunctionStep, register_step
from olive_eval.registry_spec import SpecForm
from olive_eval.strict_model import StrictModel, shown_json
from olive_eval.transforms import TextTransform, TransformParams, build_transform, transform_registry

#: One example's data columns by name: what a filter that takes ``docs`` gets per example.
Row = dict[str, Any]


class Repeats(list):  # type: ignore[type-arg]
    """Several predictions of one example (e.g. sampled generations), as opposed to one prediction that
    happens to be a list (tokens, boxes)."""

    def __repr__(self) -> str:
        return f"Repeats({list.__repr__(self)})"


class FilterParams(StrictModel):
    """A filter's config: its ``type`` and its own keys (none here; subclasses add theirs)."""

    type: str


class Filter:
    """Base of every filter: ``apply`` maps the list of per-example entries to a list of the same length."""

    name: str = ""
    Params: ClassVar[type[FilterParams]] = FilterParams
    #: Whether the filter turns every :class:`Repeats` into one prediction (what a metric with repeats needs).
    reduces_repeats: ClassVar[bool] = False

    def __init__(self, params: FilterParams) -> None:
        self.params = params

    def apply(self, predictions: list[Any]) -> list[Any]:
        raise NotImplementedError

    @property
    def takes_docs(self) -> bool:
        """Whether ``apply`` takes the examples' rows as a second argument (lm-eval's ``apply(resps, docs)``)."""
        return takes_second_argument(type(self).apply)

    def __repr__(self) -> str:
        keys = self.params.model_dump(exclude={"type"})
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in keys.items())})"


def example_where(index: int, repeat: int | None) -> str:
    """``example 3`` or ``example 3 (repeat 1)``, for a filter's error about one prediction."""
    return f"example {index}" if repeat is None else f"example {index} (repeat {repeat})"


class PredictionFilter(Filter):
    """A filter of each prediction on its own; every prediction of a :class:`Repeats` goes through it.

    ``expects`` is the type a prediction must have and how to say it in an error, or None for any value.
    """

    expects: ClassVar[tuple[type, str] | None] = None

    def transform(self, prediction: Any) -> Any:
        raise NotImplementedError

    def apply(self, predictions: list[Any]) -> list[Any]:
        out: list[Any] = []
        for index, entry in enumerate(predictions):
            if isinstance(entry, Repeats):
                out.append(Repeats(self._one(p, index, r) for r, p in enumerate(entry)))
            else:
                out.append(self._one(entry, index, None))
        return out

    def _one(self, prediction: Any, index: int, repeat: int | None) -> Any:
        if self.expects is not None and not isinstance(prediction, self.expects[0]):
            raise TypeError(
                f"filter '{self.name}': the prediction of {example_where(index, repeat)} is of type "
                f"{type(prediction).__name__}, not {self.expects[1]}"
            )
        return self.transform(prediction)


class StringFilter(PredictionFilter):
    expects = (str, "a string")


# --------------------------------------------------------------------------------------------- registry

filter_registry: Registry[Any] = Registry(
    "filter type",
    ("olive_eval.data.builtin_filters",),
    group="olive_eval.filters",
    adopt=lambda name, obj, origin: register_filter(name)(obj),
    form=SpecForm(
        built=Filter,
        missing="missing required key 'type'; registered: {names}",
        unknown="unknown {kind} '{name}'{hint}{listed}",
        other=lambda data, path: _as_transform(data, path),
    ),
)
"""Name → a Filter subclass, or a :class:`~olive_eval.registry_function.FunctionEntry` for a registered
function; other packages add either through the entry-point group ``olive_eval.filters``."""

F = TypeVar("F")


class FunctionFilter(FunctionStep, PredictionFilter):
    """A user's ``f(prediction) -> prediction`` applied to every prediction. Pickles by reference to ``f``."""

    def transform(self, prediction: Any) -> Any:
        return self.func(prediction)


class RowFunctionFilter(FunctionStep, Filter):
    """A user's ``f(prediction, doc) -> prediction``: every prediction with its example's row as ``doc``."""

    def apply(self, predictions: list[Any], docs: list[Row]) -> list[Any]:
        return [
            Repeats(self.func(p, doc=doc) for p in entry) if isinstance(entry, Repeats) else self.func(entry, doc=doc)
            for entry, doc in zip(predictions, docs, strict=True)
        ]


def takes_second_argument(apply: Callable[..., Any]) -> bool:
    """Whether a filter's ``apply(self, predictions, ...)`` takes a second positional argument (or ``*args``)."""
    kinds = [p.kind for p in inspect.signature(apply).parameters.values()]
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return inspect.Parameter.VAR_POSITIONAL in kinds or sum(k in positional for k in kinds) >= 3


def function_step(name: str, func: Any) -> type[FunctionStep]:
    """The step of a function filter: with a ``doc`` parameter it takes its example's row; ``docs`` (lm-eval's
    name for the list of all rows) is refused, since a function filter sees one prediction at a time."""
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):  # a builtin without a signature: one prediction in, one out
        return FunctionFilter
    if "docs" in params:
        raise TypeError(
            f"@register_filter('{name}'): a filter function gets one example's row at a time: name its parameter "
            "'doc', not 'docs' (or subclass Filter with apply(self, predictions, docs) for all of them)"
        )
    return RowFunctionFilter if "doc" in params else FunctionFilter


def register_filter(name: str) -> Callable[[F], F]:
    """Register a filter under ``name``, usable as ``{"type": name}`` in a metric's ``filters``.

    On a :class:`Filter` subclass (with its own ``Params`` model and ``apply``, which may take ``docs``); or on a
    plain function ``f(prediction) -> prediction`` (or ``f(prediction, doc)``, given its example's row), which is
    applied to every prediction (each one of a Repeats) and takes no parameters. Returns what it decorates unchanged (a class gets its ``name`` set).
    """

    def wrap(obj: F) -> F:
        step = FunctionFilter if isinstance(obj, type) else function_step(name, obj)
        register_step(filter_registry, name, obj, Filter, step, "register_filter")
        return obj

    return wrap


# --------------------------------------------------------------------------------------------- adapters


class TransformFilter(StringFilter):
    """A text transform of :mod:`olive_eval.transforms` applied to every prediction. The built-in text filters
    are these, and a filter ``type`` that names no filter but a registered transform (a user's, Whisper's)
    is one too: the transform registry is the one place text transforms live."""

    def __init__(self, params: FilterParams | TransformParams, transform: TextTransform | None = None) -> None:
        super().__init__(params)  # type: ignore[arg-type]
        self.name = self.name or params.type
        self._text = transform if transform is not None else build_transform(params.model_dump(), self.name)

    def transform(self, prediction: str) -> str:
        return self._text(prediction)


# --------------------------------------------------------------------------------------------- building


def _as_transform(data: dict[str, Any], path: str) -> Filter | None:
    """A filter ``type`` that names no filter but a registered text transform: that transform on every prediction."""
    if data["type"] not in transform_registry:
        return None
    text = build_transform(data, path)
    return TransformFilter(text.params, text)


def build_filter(spec: dict[str, Any] | Filter, path: str = "filters[0]") -> Filter:
    """One filter from ``{"type": ..., **params}`` or ``{"type": ..., "params": {...}}``; a Filter passes through.

    Raises ValueError as ``"<path>.<key>: what is wrong"``.
    """
    return filter_registry.build(spec, path)  # type: ignore[no-any-return]


def build_filters(specs: Sequence[dict[str, Any] | Filter] | None, path: str = "filters") -> list[Filter]:
    """Every filter of a metric's ``filters`` list, validated; errors name ``path[i].key``."""
    if specs is None:
        return []
    if not isinstance(specs, (list, tuple)):
        raise ValueError(f"{path}: expected a list of filters, got {shown_json(specs)}")
    return [build_filter(spec, f"{path}[{i}]") for i, spec in enumerate(specs)]


def apply_filters(
    filters: Sequence[Filter], predictions: Sequence[Any], docs: Sequence[Row] | None = None
) -> list[Any]:
    """``predictions`` (one entry per example) through each filter in order; the input is not modified.

    ``docs``: the examples' rows, for the filters that take them (:attr:`Filter.takes_docs`)."""
    out = list(predictions)
    if docs is not None and len(docs) != len(out):
        raise ValueError(f"filters: {len(docs)} rows for {len(out)} examples")
    for flt in filters:
        n = len(out)
        if flt.takes_docs and docs is None:
            raise ValueError(f"filter '{flt.name}' takes the examples' rows (docs), which were not given")
        out = list(flt.apply(out, list(docs))) if flt.takes_docs else list(flt.apply(out))  # type: ignore[call-arg]
        if len(out) != n:
            raise ValueError(f"filter '{flt.name}' returned {len(out)} entries for {n} examples")
    return out
