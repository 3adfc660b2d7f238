"""A batch's model input columns as the dense arrays a tensor runtime (ONNX Runtime, torch) is called with.

Rows of one input must share a shape to make one array. numpy's own complaint about rows that do not ("setting an
array element with a sequence") names neither the input nor the example; the errors here name both, with the
lengths that differ.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from olive_eval.errors import EvaluationError


def input_array(column: Any, name: str, start: int = 0) -> np.ndarray:
    """``column`` (one row per example; ``start`` is the first row's example) as one array."""
    if isinstance(column, np.ndarray):
        return column
    try:
        return np.asarray(column)
    except ValueError as exc:
        shapes = [_shape(row) for row in column]
        odd = next((i for i, shape in enumerate(shapes) if shape != shapes[0]), None)
        if odd is None:
            raise EvaluationError(f"input column '{name}' cannot be made one array: {exc}") from exc
        raise EvaluationError(
            f"input column '{name}' holds rows of different lengths: example {start + odd} has "
            f"{_size(shapes[odd])} where example {start} has {_size(shapes[0])}; a model input needs one length in a "
            "batch (fix the data, or pad the rows in pre-processing, as a tokenizer does)"
        ) from None


def cast_input(name: str, value: Any, dtype: np.dtype, start: int = 0) -> np.ndarray:
    """``value`` as a contiguous ``dtype`` array.

    Float precision may drop (float64 → float32 is the usual case), but a cast to an integer or bool
    type must keep every value: silently truncated ids would give wrong metrics, not an error.
    """
    array = input_array(value, name, start)
    if array.dtype == dtype:
        return np.require(array, requirements="C")  # keeps a 0-d input (a scalar ``step``) 0-d
    cast = np.require(array, dtype=dtype, requirements="C")
    lossy = dtype.kind in "biu" and not np.can_cast(array.dtype, dtype, casting="safe")
    if lossy and not np.array_equal(cast, array):
        raise EvaluationError(f"input '{name}' has dtype {array.dtype} with values that do not fit the model's {dtype}")
    return cast


def _shape(row: Any) -> tuple[int, ...] | None:
    """A row's shape; None for a row that is itself ragged."""
    try:
        return np.shape(row)
    except ValueError:
        return None


def _size(shape: tuple[int, ...] | None) -> str:
    if shape is None:
        return "rows of different lengths itself"
    if not shape:
        return "a single value"
    return f"{shape[0]} values" if len(shape) == 1 else f"shape {list(shape)}"
