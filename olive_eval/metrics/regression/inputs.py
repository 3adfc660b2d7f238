"""Regression inputs at the edge: predictions and references as float64 ``[n, k]`` arrays, and their NaN.

A model's regression output is a number per example (shape ``[n]``) or a vector of ``k`` outputs (``[n, k]``);
``[n, 1]`` is one output. A Python model may return a list of numbers, or of 1-element arrays. Every error is one
line naming the column and the first bad example, numbered from ``start`` (a batch's first example in a pass).

A NaN is a missing value. ``nan_policy`` says what it does, as scipy.stats' option of that name: ``propagate``
(the value is undefined, naming the first example that holds one), ``omit`` (an example holding a NaN is left out)
or ``raise`` (an error naming it).
"""

from __future__ import annotations

from numbers import Real
from typing import Literal

import numpy as np

__all__ = ["NanPolicy", "check_nan", "missing_reason", "outputs", "paired"]

NanPolicy = Literal["propagate", "omit", "raise"]


def _shown(value: object) -> str:
    text = repr(value.item() if isinstance(value, np.generic) else value)
    return text if len(text) <= 40 else text[:37] + "..."


def _is_number(value: object) -> bool:
    if isinstance(value, (Real, np.number, np.bool_)):
        return True
    if isinstance(value, (list, tuple, np.ndarray)):
        try:
            return np.asarray(value).dtype.kind in "biuf"
        except ValueError:  # ragged
            return False
    return False


def outputs(values: object, what: str, *, start: int = 0) -> np.ndarray:
    """``values`` as a float64 ``[n, k]`` array: ``[n]`` and ``[n, 1]`` are one output per example."""
    try:
        arr = np.asarray(values)
    except ValueError:  # ragged rows
        arr = np.asarray(values, dtype=object)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.dtype.kind not in "biuf":
        items = list(values) if isinstance(values, (list, tuple)) else list(arr)
        bad = next((i for i, v in enumerate(items) if not _is_number(v)), None)
        if bad is None:
            raise ValueError(
                f"{what}: examples hold different numbers of values; each needs the same number of outputs"
            )
        raise ValueError(f"{what}: example {start + bad} is {_shown(items[bad])}, not a number")
    if arr.ndim > 2:
        shape = list(arr.shape)
        raise ValueError(
            f"{what}: shape {shape} is not [n] or [n, outputs]; a regression output is a number or a vector"
        )
    arr = arr.astype(np.float64, copy=False)
    return arr.reshape(len(arr), -1) if arr.ndim == 2 else arr[:, None]


def paired(predictions: object, references: object, *, start: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Predictions and references as float64 ``[n, k]`` arrays of one shape."""
    p = outputs(predictions, "predictions", start=start)
    r = outputs(references, "references", start=start)
    if len(p) != len(r):
        raise ValueError(f"predictions and references hold different numbers of examples: {len(p)} vs {len(r)}")
    if p.shape[1] != r.shape[1]:
        raise ValueError(
            f"predictions have {p.shape[1]} output(s) per example but references {r.shape[1]}; they must match"
        )
    return p, r


def check_nan(p: np.ndarray, r: np.ndarray, policy: NanPolicy, *, start: int = 0) -> None:
    """With ``raise``, the first NaN is an error; the other policies keep NaN for the reduction to handle."""
    if policy != "raise":
        return
    for arr, what in ((p, "prediction"), (r, "reference")):
        nan = np.isnan(arr)
        if nan.any():
            example = int(np.argmax(nan.any(axis=1)))
            raise ValueError(f"the {what} of example {start + example} is NaN (nan_policy 'raise')")


def missing_reason(missing: np.ndarray) -> str:
    """Why a value with ``nan_policy: propagate`` is undefined: how many examples hold NaN, and the first."""
    count, first = int(missing.sum()), int(np.argmax(missing))
    which = "1 example holds" if count == 1 else f"{count} examples hold"
    return f"{which} a NaN prediction or reference (the first: example {first}); nan_policy 'omit' leaves them out"
