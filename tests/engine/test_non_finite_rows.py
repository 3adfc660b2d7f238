"""The pass's check for NaN and infinity in a batch's output: ``isfinite`` on a small output, one sum on a large
one (both paths run every test here), the rows named otherwise; a sum that overflows (large finite values) is not
taken for an infinity."""

from __future__ import annotations

import numpy as np
import pytest

from olive_eval.engine.passes import pass_loop
from olive_eval.engine.passes.pass_loop import non_finite_rows

SMALL = pass_loop.SMALL_OUTPUT


@pytest.fixture(autouse=True, params=["isfinite", "sum"])
def path(request, monkeypatch):
    """Every output checked the small-output way, then the large-output way (no output is small)."""
    if request.param == "sum":
        monkeypatch.setattr(pass_loop, "SMALL_OUTPUT", -1)
    return request.param


def reference(raw: np.ndarray) -> np.ndarray | None:
    bad = ~np.isfinite(raw.astype(np.float64))
    rows = bad.reshape(len(bad), -1).any(axis=1) if bad.size else np.zeros(len(bad), dtype=bool)
    return rows if rows.any() else None


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("shape", [(64,), (64, 10), (8, 3, 5), (0, 4)])
def test_the_rows_with_nan_or_infinity_are_those_numpy_finds(dtype, shape):
    rng = np.random.default_rng(0)
    raw = rng.standard_normal(shape).astype(dtype)
    assert non_finite_rows(raw) is None and reference(raw) is None
    if raw.size:
        flat = raw.reshape(-1)
        flat[rng.choice(flat.size, 3, replace=False)] = [np.nan, np.inf, -np.inf]
        np.testing.assert_array_equal(non_finite_rows(raw), reference(raw))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_large_finite_values_whose_sum_overflows_are_finite(dtype):
    big = np.finfo(dtype).max
    raw = np.full((4, 3), big, dtype=dtype)
    raw[1] = -big  # the sum passes through infinity and NaN would follow from inf - inf
    assert non_finite_rows(raw) is None and reference(raw) is None
    raw[2, 1] = np.nan
    np.testing.assert_array_equal(non_finite_rows(raw), [False, False, True, False])


def test_integer_and_object_outputs_are_not_checked():
    assert non_finite_rows(np.arange(6).reshape(3, 2)) is None
    assert non_finite_rows(["a", "b"]) is None


def test_an_output_past_the_small_size_is_checked_whole():
    raw = np.zeros((SMALL // 8 + 1, 8), dtype=np.float32)
    assert raw.size > SMALL and non_finite_rows(raw) is None
    raw[-1, 3] = np.inf
    expected = np.zeros(len(raw), dtype=bool)
    expected[-1] = True
    np.testing.assert_array_equal(non_finite_rows(raw), expected)
    np.testing.assert_array_equal(non_finite_rows(raw), reference(raw))


VIEWS = {"transposed": lambda a: a.T, "strided": lambda a: a[:, ::2], "reversed": lambda a: a[::-1]}


@pytest.mark.parametrize("view", sorted(VIEWS))
def test_an_output_not_contiguous_is_checked_as_numpy_finds(view):
    """The small output's check reads the bytes of its ``isfinite`` array: a view of the model's output (another
    order, every other column) is checked as numpy finds, a NaN in a column the view leaves out included."""
    rng = np.random.default_rng(1)
    for i, j in [(0, 0), (11, 9), (3, 1), (5, 4)]:
        whole = rng.standard_normal((12, 10)).astype(np.float32)
        raw = VIEWS[view](whole)
        assert not raw.flags.c_contiguous and non_finite_rows(raw) is None
        whole[i, j] = np.nan
        found, expected = non_finite_rows(raw), reference(raw)
        assert (found is None) == (expected is None)
        if expected is not None:
            np.testing.assert_array_equal(found, expected)
