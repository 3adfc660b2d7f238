"""The built-in metric filters, lm-evaluation-harness's ``filter_list`` steps (:mod:`olive_eval.data.filters` is the
interface, the registry and the builder; a lookup imports this module through the registry's index).

The text filters (``regex``, ``lowercase``, ``uppercase``, ``strip``, ``remove_punctuation``) are the text
transforms of those names applied to every prediction; ``map`` maps each prediction; ``take_first`` and
``majority_vote`` turn each :class:`Repeats` into one prediction.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from olive_eval.data.filters import (
    Filter,
    FilterParams,
    PredictionFilter,
    Repeats,
    TransformFilter,
    example_where,
    register_filter,
)
from olive_eval.transforms import RegexParams


@register_filter("regex")
class RegexFilter(TransformFilter):
    """The transform ``regex`` (:class:`olive_eval.transforms.Regex`): lm-eval's regex filter."""

    class Params(FilterParams, RegexParams):
        pass

    params: Params


@register_filter("lowercase")
class LowercaseFilter(TransformFilter):
    pass


@register_filter("uppercase")
class UppercaseFilter(TransformFilter):
    pass


@register_filter("strip")
class StripFilter(TransformFilter):
    pass


@register_filter("remove_punctuation")
class RemovePunctuationFilter(TransformFilter):
    pass


@register_filter("map")
class MapFilter(PredictionFilter):
    """``mapping[prediction]``; a prediction not in the mapping gives ``default``, or itself when ``default``
    is null. Keys are compared as they are: JSON keys are strings, so ``{"0": ...}`` does not match the int 0."""

    expects = (Hashable, "a hashable value")

    class Params(FilterParams):
        mapping: dict[Any, Any]
        default: Any = None

    params: Params

    def transform(self, prediction: Any) -> Any:
        if prediction in self.params.mapping:
            return self.params.mapping[prediction]
        return prediction if self.params.default is None else self.params.default


def each_repeats(flt: Filter, predictions: list[Any], reduce: Callable[[Repeats, int], Any]) -> list[Any]:
    """One prediction out of each Repeats (``reduce(repeats, index)``); a single prediction stays as it is."""
    out: list[Any] = []
    for index, entry in enumerate(predictions):
        if isinstance(entry, Repeats):
            if not entry:
                raise ValueError(f"filter '{flt.name}': example {index} has no predictions (an empty Repeats)")
            out.append(reduce(entry, index))
        else:
            out.append(entry)
    return out


@register_filter("take_first")
class TakeFirstFilter(Filter):
    """The first prediction of each Repeats."""

    reduces_repeats = True

    def apply(self, predictions: list[Any]) -> list[Any]:
        return each_repeats(self, predictions, lambda repeats, _: repeats[0])


@register_filter("majority_vote")
class MajorityVoteFilter(Filter):
    """The most common prediction of each Repeats; on a tie, the one that appears first."""

    reduces_repeats = True

    def apply(self, predictions: list[Any]) -> list[Any]:
        return each_repeats(self, predictions, self._vote)

    def _vote(self, repeats: Repeats, index: int) -> Any:
        counts: dict[Any, int] = {}
        for r, prediction in enumerate(repeats):
            if not isinstance(prediction, Hashable):
                raise TypeError(
                    f"filter '{self.name}': the prediction of {example_where(index, r)} is of type "
                    f"{type(prediction).__name__}, not a hashable value"
                )
            counts[prediction] = counts.get(prediction, 0) + 1
        return max(counts, key=counts.__getitem__)  # max keeps the first of equal counts: first seen wins
