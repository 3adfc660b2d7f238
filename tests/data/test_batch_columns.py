"""The column helpers every batch goes through: a batch's row count, a model output picked by name or position, and
batches' columns joined; each checked against what it is defined to give, on random and edge-case data."""

from __future__ import annotations

import numpy as np
import pytest

from olive_eval.data.batch import concat, num_rows, select_output
from olive_eval.errors import EvaluationError


@pytest.mark.parametrize("seed", range(4))
def test_the_row_count_is_the_columns_common_length(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 5))
    columns = {"x": rng.standard_normal((n, 3)), "text": [f"t{i}" for i in range(n)], "y": np.arange(n)}
    assert num_rows(columns) == n and num_rows({}) == 0
    with pytest.raises(ValueError, match=rf"columns differ in length: \[{n}, {n + 1}\]"):
        num_rows({**columns, "extra": list(range(n + 1))})


def reference_output(outputs: dict, which):
    """An output by name, or by position counted from either end (Python's indexing), as the helper defines it."""
    names = list(outputs)
    if isinstance(which, int):
        return outputs[names[which]] if -len(names) <= which < len(names) else "out of range"
    return outputs.get(which, "no such output")


@pytest.mark.parametrize("count", [1, 2, 3])
def test_an_output_by_position_or_name_is_the_one_indexing_gives(count):
    outputs = {f"o{i}": np.full(2, i) for i in range(count)}
    for which in [*range(-count - 1, count + 1), True, False, "o0", f"o{count - 1}", "absent"]:
        expected = reference_output(outputs, which)
        if isinstance(expected, str):
            with pytest.raises(EvaluationError, match="out of range" if expected == "out of range" else "no output"):
                select_output(outputs, which)
        else:
            assert select_output(outputs, which) is expected


class Tagged(np.ndarray):
    """An array subclass: it joins as an array does."""


@pytest.mark.parametrize(
    ("parts", "joined"),
    [
        ([np.arange(2), np.arange(2, 5)], np.arange(5)),
        ([np.zeros((1, 2)), np.ones((2, 2))], np.array([[0.0, 0.0], [1.0, 1.0], [1.0, 1.0]])),
        ([np.arange(2).view(Tagged), np.arange(2, 4)], np.arange(4)),
        ([np.zeros((1, 2)), np.zeros((1, 3))], [np.zeros(2), np.zeros(3)]),  # widths differ: rows
        ([np.arange(2), [2, 3]], [0, 1, 2, 3]),  # an array and a list: rows
        ([["a"], ["b", "c"]], ["a", "b", "c"]),
        ([], []),
    ],
)
def test_parts_join_as_one_array_when_all_are_arrays_of_one_width(parts, joined):
    out = concat(parts)
    if isinstance(joined, np.ndarray):
        assert isinstance(out, np.ndarray)
        np.testing.assert_array_equal(out, joined)
    else:
        assert isinstance(out, list) and len(out) == len(joined)
        for got, want in zip(out, joined, strict=True):
            np.testing.assert_array_equal(got, want)
