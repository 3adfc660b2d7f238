"""What a registered metric accepts: Unitxt's ``prediction_type`` and ``single_reference_per_prediction``.

A metric written for one type (an int sum, a list of class names) gives nonsense, or a traceback deep in the user's
function, when a post-processor hands it another; checking every example first turns that into one line that
names the example.

* ``prediction_type``: ``str``, ``int``, ``float``, ``bool``, ``dict``, ``list`` or ``list[X]`` of those (a type
  or its name, ``"list[str]"``). ``float`` takes an int too (Python's numeric tower: 3 is a float value); ``int``
  and ``float`` never take a bool. Numpy scalars count as their Python values, a 1-d array as a list. References
  are not held to it (Unitxt's are of the prediction's type; here a classifier's prediction is its logits and its
  reference a class index).
* ``single_reference_per_prediction``: an example with several references (a list of them) is refused; a list
  holding one reference reaches the function as that reference. With a ``list[...]`` type a reference that is
  such a list is one reference (multi-label class names), and a list of such lists holds several.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from olive_eval.errors import EvaluationError

_SCALARS: dict[str, type] = {"str": str, "int": int, "float": float, "bool": bool, "dict": dict, "list": list}
_LIST_OF = re.compile(r"^(?:list|List)\[(.+)\]$")


@dataclass(frozen=True)
class PredictionType:
    """A value type: ``base``, and for a list the type of its items (``item``; None: any items)."""

    base: type
    item: PredictionType | None = None

    def __str__(self) -> str:
        return f"list[{self.item}]" if self.item is not None else self.base.__name__

    def fits(self, value: Any) -> bool:
        value = plain(value)
        if self.base is list:
            items = as_items(value)
            return items is not None and (self.item is None or all(self.item.fits(v) for v in items))
        if self.base in (int, float) and isinstance(value, bool):
            return False
        if self.base is float:
            return isinstance(value, int | float)
        return isinstance(value, self.base)


def plain(value: Any) -> Any:
    """Numpy scalars and 0-d arrays as Python values."""
    if isinstance(value, np.generic) or (isinstance(value, np.ndarray) and value.ndim == 0):
        return value.item()
    return value


def as_items(value: Any) -> list[Any] | None:
    """A list, tuple or 1-d array as its items; None for anything else (a string is one value, not a list)."""
    if isinstance(value, np.ndarray):
        return list(value) if value.ndim == 1 else None
    return list(value) if isinstance(value, list | tuple) else None


def parse_prediction_type(spec: Any, metric: str) -> PredictionType:
    """``spec`` (``str``, ``list[str]``, ``"list[str]"``...) as a :class:`PredictionType`; ValueError otherwise."""
    if isinstance(spec, str):
        text = spec.strip()
        match = _LIST_OF.match(text)
        if match:
            return PredictionType(list, parse_prediction_type(match.group(1), metric))
        if text in _SCALARS:
            return PredictionType(_SCALARS[text])
    elif isinstance(spec, type) and spec in _SCALARS.values():
        return PredictionType(spec)
    elif typing.get_origin(spec) is list:
        args = typing.get_args(spec)
        return PredictionType(list, parse_prediction_type(args[0], metric) if args else None)
    raise ValueError(
        f"metric '{metric}': prediction_type {spec!r} is not one of str, int, float, bool, dict, list or list[...]"
    )


def _shown(value: Any) -> str:
    text = repr(plain(value))
    return text if len(text) <= 80 else text[:77] + "..."


@dataclass(frozen=True)
class InputChecks:
    """The checks a metric asks for, run over every example before its function sees any."""

    prediction_type: PredictionType | None = None
    single_reference: bool = False

    def apply(self, metric: str, reads: Sequence[str], fields: tuple[Any, ...]) -> tuple[Any, ...]:
        """``fields`` (the columns of ``reads``) checked; with ``single_reference``, one-reference lists unwrapped.
        EvaluationError names the first example that does not fit."""
        out = list(fields)
        if self.prediction_type is not None and "prediction" in reads:
            for i, prediction in enumerate(fields[reads.index("prediction")]):
                if not self.prediction_type.fits(prediction):
                    raise EvaluationError(
                        f"metric '{metric}' takes predictions of type {self.prediction_type}; instance {i}'s "
                        f"prediction {_shown(prediction)} is {type(plain(prediction)).__name__}"
                    )
        if self.single_reference and "references" in reads:
            at = reads.index("references")
            out[at] = [self._reference(metric, i, r) for i, r in enumerate(fields[at])]
        return tuple(out)

    def _reference(self, metric: str, index: int, reference: Any) -> Any:
        """The example's one reference: itself, or the one item of a list (the several-references form)."""
        wanted = self.prediction_type
        one_list = wanted is not None and wanted.base is list and wanted.fits(reference)
        items = None if one_list else as_items(reference)  # a list[...] reference of the type is one reference
        if items is None:
            return plain(reference)
        if len(items) != 1:
            raise EvaluationError(
                f"metric '{metric}' takes one reference per prediction; instance {index} has {len(items)}: "
                f"{_shown(reference)}"
            )
        return plain(items[0])
