"""The violation reader in C (_columns.c) gives the same flat columns as the Python forms, and hands anything but
the plain form (exact dicts, list/tuple spans of ints inside the document, str fields) back to them, so that every
error message stays the one the per-document path writes."""

from __future__ import annotations

import random

import numpy as np
import pytest

from olive_eval.metrics.violations import inputs
from olive_eval.metrics.violations.inputs import columns_extension, flatten

FIELDS = ("rule", "category", "explanation", "correction")


def test_the_c_extension_is_built():
    assert columns_extension is not None


def _data(seed: int, docs: int = 200) -> tuple[list[str], list[list[dict]]]:
    rng = random.Random(seed)
    texts, lists = [], []
    for d in range(docs):
        text = "x" * rng.randint(0, 80) + "é" * rng.randint(0, 5)  # len() counts code points
        items = []
        for _ in range(0 if d % 7 == 0 else rng.randint(1, 6)):
            s = rng.randint(0, len(text))
            e = rng.randint(s, len(text))
            span = [s, e] if rng.random() < 0.5 else (s, e)
            items.append({"span": span, **{f: f"{f}{rng.randint(0, 3)}" for f in FIELDS}, "extra": 1})
        texts.append(text)
        lists.append(items)
    return texts, lists


def _same(a: inputs.Violations, b: inputs.Violations) -> None:
    for name in ("offsets", "starts", "ends"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype == np.int64
        np.testing.assert_array_equal(x, y)
    assert a.texts == b.texts


@pytest.mark.parametrize("fields", [("rule",), FIELDS])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_c_reader_equals_the_python_forms(fields, seed, monkeypatch):
    texts, lists = _data(seed)
    needed = fields[1:]
    answers = []

    class Spy:
        @staticmethod
        def columns(*args):
            answers.append(columns_extension.columns(*args))
            return answers[-1]

    monkeypatch.setattr(inputs, "columns_extension", Spy)
    native = flatten(lists, texts, "prediction", needed)
    assert len(answers) == 1 and answers[0] is not None  # the C path did read them
    monkeypatch.setattr(inputs, "columns_extension", None)
    _same(native, flatten(lists, texts, "prediction", needed))


@pytest.mark.parametrize(
    "change",
    [
        lambda v: v.update(span=[True, 2]),  # a bool is no plain int
        lambda v: v.update(span=np.array([0, 1])),
        lambda v: v.update(span=[0, 1, 2]),
        lambda v: v.update(span=[0, 10**30]),
        lambda v: v.update(span=[2, 1]),
        lambda v: v.update(span=[0, 10_000]),
        lambda v: v.update(rule=None),
        lambda v: v.update(rule=3),
        lambda v: v.pop("rule"),
        lambda v: v.pop("span"),
    ],
)
def test_anything_but_the_plain_form_goes_back_to_python(change):
    texts, lists = ["abcdef"] * 3, [[{"span": [0, 2], "rule": "r"}] for _ in range(3)]
    assert columns_extension.columns(lists, texts, ("rule",)) is not None
    change(lists[1][0])
    assert columns_extension.columns(lists, texts, ("rule",)) is None


def test_outer_shapes_go_back_to_python_and_errors_stay_the_per_document_ones():
    item = {"span": [0, 2], "rule": "r"}
    assert columns_extension.columns([(item,)], ["abc"], ("rule",)) is None  # a tuple list
    assert columns_extension.columns([[item]], [b"abc"], ("rule",)) is None  # a non-str document
    assert columns_extension.columns([[item]], ["abc", "d"], ("rule",)) is None
    assert columns_extension.columns([], [], ("rule",)) == (bytearray(8), bytearray(), bytearray(), [[]])
    with pytest.raises(ValueError, match=r"example 1: prediction violation 0: span \[0, 9\) is outside the document"):
        flatten([[item], [{"span": [0, 9], "rule": "r"}]], ["abc", "abc"], "prediction", ())
    with pytest.raises(ValueError, match="example 0: prediction violation 0: rule must be a string, got int"):
        flatten([[{"span": [0, 1], "rule": 3}]], ["abc"], "prediction", ())
