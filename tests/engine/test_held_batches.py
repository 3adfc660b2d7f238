"""Held batches: an ordinary pass post-processes, checks and scores its batches joined up to the scorers' chunk
boundary. The reference is the same pass handling every batch alone (``run_pass(..., hold=False)``): the same
values, intervals, instance records (row group by row group), errors and timing records, on data whose chunks close
by examples, by bytes and by a batch that does not join; and the cases that need a batch alone still get it."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import onnx
import pyarrow.parquet as pq
import pytest
from onnx import TensorProto, helper, numpy_helper

from olive_eval import evaluate
from olive_eval.data.batch import Batch, Columns
from olive_eval.data.collate import UnbatchedFieldsBatch
from olive_eval.data.postprocess import Argmax, AxisParams, Identity, PostParams, Sigmoid, SigmoidParams, Softmax
from olive_eval.data.prepared import PrepareContext, Prepared
from olive_eval.engine.passes import chunks, pass_loop
from olive_eval.engine.passes.chunks import Chunker
from olive_eval.engine.run.data_store import DataView
from olive_eval.engine.work import prediction_pass
from olive_eval.errors import EvaluationError
from olive_eval.records.parquet import read_records
from tests.helpers import write_jsonl


def mlp_onnx(path: Path, weights: np.ndarray, log_of_first: bool = False) -> Path:
    """``logits = x @ weights`` (``log_of_first``: the first logit replaced by log(x0), NaN where x0 < 0)."""
    nodes = [helper.make_node("MatMul", ["x", "W"], ["mm"])]
    if log_of_first:
        nodes += [
            helper.make_node("Slice", ["x", "zero", "one", "one_axis"], ["x0"]),
            helper.make_node("Log", ["x0"], ["log"]),
            helper.make_node("Slice", ["mm", "one", "big", "one_axis"], ["rest"]),
            helper.make_node("Concat", ["log", "rest"], ["logits"], axis=1),
        ]
    else:
        nodes.append(helper.make_node("Identity", ["mm"], ["logits"]))
    ints = {"zero": 0, "one": 1, "big": 1 << 30}
    initializers = [numpy_helper.from_array(weights.astype(np.float32), "W")]
    initializers += [numpy_helper.from_array(np.array([v], dtype=np.int64), k) for k, v in ints.items()]
    initializers.append(numpy_helper.from_array(np.array([1], dtype=np.int64), "one_axis"))
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", weights.shape[0]])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", weights.shape[1]])],
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def problem(root: Path, n: int, features: int, classes: int, seed: int = 0, flip: float = 0.2) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    weights = rng.standard_normal((features, classes)).astype(np.float32)
    x = rng.standard_normal((n, features)).astype(np.float32).round(3)
    labels = (x @ weights).argmax(axis=1)
    labels = np.where(rng.random(n) < flip, rng.integers(0, classes, n), labels)  # not every prediction right
    rows = [{"x": a.tolist(), "label": int(y), "text": f"t{i}"} for i, (a, y) in enumerate(zip(x, labels, strict=True))]
    return {"data": write_jsonl(root / "data.jsonl", rows), "weights": weights, "x": x, "labels": labels}


def run_config(root: Path, p: dict[str, Any], model: Path, batch: int, post: dict, subs: list[dict]) -> dict:
    return {
        "input_model": {"type": "ONNXModel", "name": "base", "model_path": str(model)},
        "data_configs": [
            {
                "name": "d",
                "type": "HuggingfaceContainer",
                "load_dataset_config": {"data_name": "json", "data_files": str(p["data"]), "split": "train"},
                "pre_process_data_config": {"input_cols": ["x"], "label_col": "label"},
                "post_process_data_config": post,
                "dataloader_config": {"batch_size": batch},
            }
        ],
        "metrics": [
            {
                "name": "m",
                "type": "accuracy",
                "data_config": "d",
                "sub_types": subs,
                "sample_log_num": 30,
                "confidence_interval": {"n_resamples": 50},
            }
        ],
        "output_dir": str(root / "out"),
    }


def outcome(config: dict, out: Path) -> dict[str, Any]:
    """What a run gives besides its times: values, intervals, errors, records by row group, samples, pass sizes."""
    result = evaluate({**config, "output_dir": str(out)})
    model = result.models["base"]
    got: dict[str, Any] = {"status": model.status, "error": model.error}
    got["metrics"] = {k: (m.value, m.error, m.ci_low, m.ci_high, m.per_class) for k, m in model.metrics.items()}
    if model.passes:
        got["pass"] = {k: model.passes["d"][k] for k in ("examples", "batches")}
    records = out / "instances" / "base" / "m.parquet"
    if records.exists():
        meta = pq.ParquetFile(records).metadata
        got["row_groups"] = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
        got["records"] = [json.dumps(r) for r in read_records(records)]
    samples = out / "samples" / "base" / "m_samples.jsonl"
    if samples.exists():
        got["samples"] = samples.read_text()
    return got


def both_ways(config: dict, root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[dict, dict]:
    held = outcome(config, root / "held")
    with monkeypatch.context() as patch:
        patch.setattr(prediction_pass, "run_pass", functools.partial(pass_loop.run_pass, hold=False))
        alone = outcome(config, root / "alone")
    return held, alone


ACCURACY = [
    {"name": "accuracy_score", "priority": 1, "metric_config": {"task": "multiclass"}},
    {"name": "f1_score", "metric_config": {"task": "multiclass", "num_classes": 4, "average": "macro"}},
    {"name": "precision", "metric_config": {"task": "multiclass", "num_classes": 4, "average": "micro"}},
]
PROBABILITIES = [
    {"name": "auroc", "priority": 1, "metric_config": {"task": "multiclass", "num_classes": 4}},
    {"name": "accuracy_score", "metric_config": {"task": "multiclass", "top_k": 2}},
]


@pytest.mark.parametrize(
    ("n", "batch", "post", "subs"),
    [
        (9000, 100, {"type": "argmax"}, ACCURACY),  # 100 does not divide the chunk: it closes at 8200 examples
        (8300, 64, {"type": "softmax"}, PROBABILITIES),
        (700, 7, {"type": "argmax", "params": {"axis": 1}}, ACCURACY),  # one chunk, the last batch short
    ],
)
def test_values_intervals_and_records_are_those_of_batches_alone(tmp_path, monkeypatch, n, batch, post, subs):
    p = problem(tmp_path, n, 6, 4)
    model = mlp_onnx(tmp_path / "m.onnx", p["weights"])
    held, alone = both_ways(run_config(tmp_path, p, model, batch, post, subs), tmp_path, monkeypatch)
    assert held == alone
    assert held["status"] == "ok" and held["pass"]["examples"] == n
    first = -(-chunks.CHUNK_EXAMPLES // batch) * batch
    assert held["row_groups"] == ([first, n - first] if n > first else [n])
    expected = (p["x"] @ p["weights"]).argmax(axis=1) == p["labels"]
    if post["type"] == "argmax":
        assert held["metrics"]["m-accuracy_score"][0] == pytest.approx(expected.mean())


def test_chunks_closing_by_bytes_inside_the_held_batches_are_those_of_batches_alone(tmp_path, monkeypatch):
    # 40 float32 logits a row plus the label: the scorer's chunk fills by bytes after about 300 examples, while the
    # pass holds its own larger rows (outputs and logits) up to a byte bound of its own: the scorer takes them
    # batch by batch where its chunk closes inside them
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 50_000)
    p = problem(tmp_path, 2000, 5, 40)
    model = mlp_onnx(tmp_path / "m.onnx", p["weights"])
    subs = [{"name": "accuracy_score", "priority": 1, "metric_config": {"task": "multiclass", "top_k": 3}}]
    held, alone = both_ways(run_config(tmp_path, p, model, 13, {"type": "softmax"}, subs), tmp_path, monkeypatch)
    assert held == alone
    assert len(held["row_groups"]) > 5 and sum(held["row_groups"]) == 2000


def test_a_non_finite_output_fails_the_pass_with_the_same_counts(tmp_path, monkeypatch):
    p = problem(tmp_path, 3000, 4, 4)
    model = mlp_onnx(tmp_path / "m.onnx", p["weights"], log_of_first=True)
    held, alone = both_ways(run_config(tmp_path, p, model, 32, {"type": "argmax"}, ACCURACY), tmp_path, monkeypatch)
    assert held == alone
    bad = np.flatnonzero(p["x"][:, 0] <= 0)  # log: NaN below 0, -inf at 0
    assert held["status"] == "failed"
    assert f"in {len(bad)} of 3000 examples (first: example {bad[0]})" in held["error"]


# ---------------------------------------------------------------------------------------------- the pass itself


class Model:
    """Outputs per batch: ``logits`` (x times 2, width set per batch by ``widths``) and ``index`` (the row)."""

    def __init__(self, widths: dict[int, int] | None = None) -> None:
        self.widths = widths or {}

    def predict(self, batch: Batch) -> dict[str, Any]:
        x = np.asarray(batch.columns["x"], dtype=np.float32)
        width = self.widths.get(batch.start, 3)
        return {
            "logits": np.repeat(2 * x[:, None], width, axis=1),
            "index": np.arange(batch.start, batch.start + len(x)),
        }


class Loader:
    def __init__(self, batches: list[Batch]) -> None:
        self.given = batches

    def batches(self, data: Prepared) -> Iterator[Batch]:
        yield from self.given


class Joined:
    """A consumer taking held batches: each hand-over kept, joined or alone."""

    def __init__(self, reads: set[str]) -> None:
        self.reads, self.seen = reads, []

    def check_fields(self, available: list[str]) -> None:
        pass

    def pass_reads(self) -> set[str]:
        return self.reads

    def takes_joined(self) -> bool:
        return True

    def update(self, fields: Columns, start: int, cache: dict) -> None:
        self.seen.append((start, [len(fields["prediction"])], {k: fields[k] for k in sorted(self.reads)}))

    def update_joined(self, fields: Columns, start: int, sizes: list[int], cache: dict) -> None:
        self.seen.append((start, sizes, {k: fields[k] for k in sorted(self.reads)}))


class CountingArgmax(Argmax):
    """Argmax counting its calls; raising on a batch holding example ``fails_at``."""

    calls = 0
    fails_at: int | None = None

    def apply(self, outputs, batch, context):
        CountingArgmax.calls += 1
        index = outputs["index"]
        if self.fails_at is not None and self.fails_at in index:
            raise ValueError(f"cannot post-process example {self.fails_at}")
        return super().apply(outputs, batch, context)


def batches_of(sizes: list[int], rng: np.random.Generator, kind: type[Batch] = Batch) -> list[Batch]:
    out, start = [], 0
    for n in sizes:
        columns: Columns = {
            "x": rng.standard_normal(n),
            "label": rng.integers(0, 3, n),
            "text": [f"t{start + i}" for i in range(n)],
        }
        out.append(kind(columns, ["x"], start) if kind is Batch else kind(columns, ["x"], start, None, ()))
        start += n
    return out


def run(given: list[Batch], post: Any, consumer: Any, hold: bool = True, model: Model | None = None, **kw):
    prepared = Prepared("d", lambda: iter([]), [], "label", ["label", "text", "x"])
    view = DataView(SimpleNamespace(name="d"), prepared, Loader(given), post, PrepareContext("d"), None)  # type: ignore[arg-type]
    CountingArgmax.calls = 0
    record = pass_loop.run_pass(model or Model(), view, [consumer], lambda message: None, hold=hold, **kw)  # type: ignore[arg-type]
    return record


def per_batch(seen: list) -> list[tuple[int, dict]]:
    """Each batch's fields, from hand-overs joined or not (the reference's view of them)."""
    out = []
    for start, sizes, fields in seen:
        offset = 0
        for size in sizes:
            out.append((start + offset, {k: v[offset : offset + size] for k, v in fields.items()}))
            offset += size
    return out


def same_batches(a: list, b: list) -> None:
    assert [s for s, _ in a] == [s for s, _ in b]
    for (_, x), (_, y) in zip(a, b, strict=True):
        assert list(x) == list(y)
        for name in x:
            if isinstance(x[name], np.ndarray):
                assert type(y[name]) is np.ndarray and x[name].dtype == y[name].dtype
                np.testing.assert_array_equal(x[name], y[name])
            else:
                assert list(x[name]) == list(y[name])


READS = {"prediction", "logits", "references", "text", "output.index"}
POSTS = [
    Argmax(AxisParams(type="argmax", output_name="logits")),
    Softmax(AxisParams(type="softmax", output_name="logits")),
    Sigmoid(SigmoidParams(type="sigmoid", output_name="logits", threshold=0.5)),
    Identity(PostParams(type="identity", output_name="logits")),
]


@pytest.mark.parametrize("post", POSTS, ids=lambda p: type(p).__name__)
@pytest.mark.parametrize("seed", range(3))
def test_held_batches_give_each_batch_the_fields_it_gets_alone(post, seed):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 40, 60).tolist()
    widths = {int(s): 5 for s in np.cumsum([0, *sizes])[rng.integers(0, 60, 3)]}  # outputs that do not join
    given = batches_of(sizes, rng)
    held, alone = Joined(READS), Joined(READS)
    run(given, post, held, model=Model(widths))
    run(given, post, alone, hold=False, model=Model(widths))
    assert all(len(sizes) == 1 for _, sizes, _ in alone.seen)
    assert any(len(sizes) > 1 for _, sizes, _ in held.seen)
    same_batches(per_batch(held.seen), per_batch(alone.seen))
    assert not {"x", "label"} & set(
        held.seen[0][2]
    )  # held batches keep the columns read (and the label's as references)


def test_the_held_batches_are_handed_over_at_the_chunk_rule(monkeypatch):
    monkeypatch.setattr(chunks, "CHUNK_EXAMPLES", 50)
    held = Joined(READS)
    run(batches_of([20] * 7, np.random.default_rng(0)), POSTS[0], held)
    assert [(start, sizes) for start, sizes, _ in held.seen] == [(0, [20, 20, 20]), (60, [20, 20, 20]), (120, [20])]


def test_a_post_process_failing_on_the_joined_batches_fails_where_the_batch_alone_does():
    post = CountingArgmax(AxisParams(type="argmax", output_name="logits"))
    post.fails_at = 95
    given = batches_of([30] * 6, np.random.default_rng(1))
    for hold in (True, False):
        consumer = Joined(READS)
        with pytest.raises(ValueError, match="cannot post-process example 95"):
            run(given, post, consumer, hold=hold)
        assert [start for start, _ in per_batch(consumer.seen)] == [0, 30, 60]  # the batches before it: scored


def test_the_timing_records_cover_every_batch_with_its_share_of_the_post_processing():
    given = batches_of([10] * 9, np.random.default_rng(2))
    record = run(given, POSTS[1], Joined(READS))
    assert [(b.index, b.size) for b in record.batches] == [(i, 10) for i in range(9)]
    assert all(b.seconds > b.model_seconds > 0 for b in record.batches)
    assert record.summary()["examples"] == 90


class NotJoined(Joined):
    def takes_joined(self) -> bool:
        return False


@pytest.mark.parametrize(
    ("case", "consumer", "post", "kind", "extra"),
    [
        ("a consumer taking batches alone", NotJoined(READS), None, Batch, {}),
        ("a consumer reading the timing", Joined({*READS, "model_seconds"}), None, Batch, {}),
        ("a stop asked after each batch", Joined(READS), None, Batch, {"stop": lambda examples: False}),
        ("unbatched fields", Joined(READS), None, UnbatchedFieldsBatch, {}),
        ("an argmax over the examples' axis", Joined(READS), 0, Batch, {}),
    ],
)
def test_what_needs_each_batch_alone_gets_it(case, consumer, post, kind, extra):
    argmax = CountingArgmax(AxisParams(type="argmax", output_name="logits", axis=-1 if post is None else post))
    given = batches_of([8] * 5, np.random.default_rng(3), kind)
    run(given, argmax, consumer, **extra)
    assert CountingArgmax.calls == 5, case
    assert [start for start, _, _ in consumer.seen] == [0, 8, 16, 24, 32]


@pytest.mark.parametrize("axis", [-3, -2, -1, 0, 1, 2])
@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_an_axis_post_process_is_row_wise_exactly_when_joined_predictions_are_the_batches(axis, ndim):
    rng = np.random.default_rng((axis + 3) * 7 + ndim)
    parts = [rng.standard_normal((n, *([4] * (ndim - 1)))) for n in (3, 5)]
    post = Softmax(AxisParams(type="softmax", output_name="y", axis=axis))
    if not -ndim <= axis < ndim:
        assert not post.row_wise(ndim)
        return

    def apply(x: np.ndarray) -> np.ndarray:
        return post.apply({"y": x}, Batch({}, []), PrepareContext("d"))

    joined_is_batches = np.array_equal(apply(np.concatenate(parts)), np.concatenate([apply(p) for p in parts]))
    assert post.row_wise(ndim) == (joined_is_batches and ndim >= 2)


@pytest.mark.parametrize("seed", range(20))
def test_joined_batches_fill_a_chunk_where_batch_by_batch_adds_do(seed, monkeypatch):
    """``Chunker.takes_whole`` against the reference, one ``add`` per batch: the chunks' boundaries and contents
    agree on random batch sizes, widths (bytes) and buffers already partly filled."""
    rng = np.random.default_rng(seed)
    monkeypatch.setattr(chunks, "CHUNK_EXAMPLES", int(rng.integers(5, 60)))
    monkeypatch.setattr(chunks, "CHUNK_BYTES", int(rng.integers(200, 3000)))
    names = ["prediction", "text"]
    sizes = rng.integers(1, 12, 80).tolist()
    columns = {
        "prediction": rng.standard_normal((sum(sizes), int(rng.integers(1, 4)))),
        "text": [f"t{i}" for i in range(sum(sizes))],
    }

    def piece(a: int, b: int) -> dict:
        return {k: v[a:b] for k, v in columns.items()}

    def reference() -> list[tuple[int, int]]:
        chunker, out, start = Chunker(names), [], 0
        for n in sizes:
            chunker.add(piece(start, start + n), start, n)
            start += n
            if chunker.full:
                out.append(chunker.take()[:2])
        return [*out, chunker.take()[:2]]

    def joined() -> list[tuple[int, int]]:
        chunker, out, start, i = Chunker(names), [], 0, 0
        while i < len(sizes):
            run_of = sizes[i : i + int(rng.integers(1, 9))]
            stop = start + sum(run_of)
            if chunker.takes_whole(piece(start, stop), run_of):
                chunker.add(piece(start, stop), start, sum(run_of))
                if chunker.full:
                    out.append(chunker.take()[:2])
            else:
                for n in run_of:
                    chunker.add(piece(start, start + n), start, n)
                    start += n
                    if chunker.full:
                        out.append(chunker.take()[:2])
            start, i = stop, i + len(run_of)
        return [*out, chunker.take()[:2]]

    assert joined() == reference()


def test_no_examples_is_still_an_error_with_held_batches():
    with pytest.raises(EvaluationError, match="has no examples"):
        run([], POSTS[0], Joined(READS))


def test_after_a_non_finite_batch_nothing_more_is_scored_joined_or_alone(monkeypatch):
    monkeypatch.setattr(chunks, "CHUNK_EXAMPLES", 40)
    given = batches_of([10] * 12, np.random.default_rng(4))
    for start in (25, 65):  # a NaN in the first held run, and another in the second
        given[start // 10].columns["x"][start % 10] = np.nan
    for hold in (True, False):
        consumer = Joined(READS)
        with pytest.raises(EvaluationError, match=r"in 2 of 120 examples \(first: example 25\)"):
            run(given, POSTS[0], consumer, hold=hold)
        assert [start for start, _ in per_batch(consumer.seen)] == [0, 10]
