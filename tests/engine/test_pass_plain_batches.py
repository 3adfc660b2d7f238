"""The pass calls an ordinary batch (no input groups) without building its groups: the fields every consumer gets are
those of the general path (each batch's groups built, the model called per group), on random data, with input
names changing from batch to batch; a batch of pairs still takes the general path."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace

import numpy as np
import pytest

from olive_eval.data.batch import Batch, Columns
from olive_eval.data.postprocess import Identity, PostParams
from olive_eval.data.prepared import PrepareContext, Prepared
from olive_eval.engine.passes import pass_loop
from olive_eval.engine.passes.fields import OUTPUT
from olive_eval.engine.run.data_store import DataView


class Doubling:
    """A model of two named outputs: each input column's rows summed, doubled; and the batch's first example."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def predict(self, batch: Batch) -> dict[str, np.ndarray]:
        self.calls.append(list(batch.inputs))
        n = len(batch.columns["label"])
        total = sum((np.asarray(batch.columns[name], dtype=np.float64) for name in batch.inputs), np.zeros(n))
        return {"y": 2 * total, "first": np.full(n, batch.start)}


class Batches:
    """A dataloader giving the batches it was made with."""

    def __init__(self, batches: list[Batch]) -> None:
        self.given = batches

    def batches(self, data: Prepared) -> Iterator[Batch]:
        yield from self.given


class Keeps:
    """A consumer keeping every batch's fields (and reading no timing field, so none is built)."""

    def __init__(self) -> None:
        self.seen: list[tuple[int, Columns]] = []

    def check_fields(self, available: list[str]) -> None:
        pass

    def pass_reads(self) -> set[str]:
        return {"prediction"}

    def update(self, fields: Columns, start: int, cache: dict) -> None:
        self.seen.append((start, dict(fields)))


def batches(rng: np.random.Generator, names: list[list[str]]) -> list[Batch]:
    out, start = [], 0
    for inputs in names:
        n = int(rng.integers(1, 6))
        columns: Columns = {name: rng.standard_normal(n) for name in inputs}
        columns["label"] = rng.integers(0, 3, n)
        columns["text"] = [f"t{start + i}" for i in range(n)]
        out.append(Batch(columns, list(inputs), start))
        start += n
    return out


def run(given: list[Batch]) -> tuple[Doubling, list[tuple[int, Columns]]]:
    prepared = Prepared("d", lambda: iter([]), [], "label", ["label", "text"])
    post = Identity(PostParams(type="identity", output_name="y"))
    config = SimpleNamespace(name="d")  # what the pass reads of the data config
    view = DataView(config, prepared, Batches(given), post, PrepareContext("d"), None)  # type: ignore[arg-type]
    model, consumer = Doubling(), Keeps()
    pass_loop.run_pass(model, view, [consumer], lambda message: None)  # type: ignore[arg-type]
    return model, consumer.seen


def same(a: list[tuple[int, Columns]], b: list[tuple[int, Columns]]) -> None:
    assert [(start, list(fields)) for start, fields in a] == [(start, list(fields)) for start, fields in b]
    for (_, x), (_, y) in zip(a, b, strict=True):
        for name in x:
            if isinstance(x[name], np.ndarray):
                assert type(y[name]) is np.ndarray and x[name].dtype == y[name].dtype
                np.testing.assert_array_equal(x[name], y[name])
            else:
                assert x[name] == y[name]


NAMES = [
    [["x"]] * 4,
    [["x"], ["x"], ["x", "z"], ["z"], ["x"]],  # the names change: each new set is looked at again
    [["x"], ["a:x", "b:x"], ["x"], ["a:x", "b:x"]],  # pairs between ordinary batches
    [[]],  # no model input at all: one call, as an ordinary batch
]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("names", NAMES)
def test_the_fields_are_those_of_the_general_path(names, seed, monkeypatch):
    given = batches(np.random.default_rng(seed), names)
    fast_model, fast = run(given)
    monkeypatch.setattr(pass_loop, "has_groups", lambda inputs: True)  # every batch through its groups
    general_model, general = run(given)
    same(fast, general)
    assert fast_model.calls == general_model.calls


def test_an_ordinary_batch_gets_the_named_outputs_and_a_pair_one_prediction_per_group():
    given = batches(np.random.default_rng(0), [["x"], ["a:x", "b:x"]])
    model, seen = run(given)
    assert model.calls == [["x"], ["x"], ["x"]]  # the pair: once per group, under the input's own name
    plain, pair = seen[0][1], seen[1][1]
    np.testing.assert_array_equal(plain["prediction"], 2 * given[0].columns["x"])
    np.testing.assert_array_equal(plain[OUTPUT + "y"], plain["prediction"])
    np.testing.assert_array_equal(plain[OUTPUT + "first"], np.zeros(given[0].size))
    assert not any(name.startswith(OUTPUT) for name in pair)
    assert pair["prediction"] == [
        {"a": 2 * a, "b": 2 * b} for a, b in zip(given[1].columns["a:x"], given[1].columns["b:x"], strict=True)
    ]


@pytest.mark.parametrize(
    ("inputs", "grouped"), [([], False), (["x"], False), (["input_ids", "mask"], False), (["x", "a:x"], True)]
)
def test_an_input_of_a_group_is_named_group_colon_input(inputs, grouped):
    assert pass_loop.has_groups(inputs) is grouped
