"""A file source's first chunk is read once and held for the run (the plan-time checks and every pass start from
it); a source of more chunks is read again from its second chunk on, with the same rows as the file."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from olive_eval.data.kept_chunks import KEPT, KeptChunks, files_key
from olive_eval.data.sources import CHUNK_ROWS, Source
from olive_eval.engine.run.data_store import DataStore, FirstChunkHeld


class Counted(Source):
    """Chunks of consecutive integers; counts how many chunks were read."""

    def __init__(self, sizes: list[int], known: bool = True) -> None:
        self.name, self.columns, self.sizes, self.known, self.reads = "d", ["x"], sizes, known, 0
        self.files = ["a.parquet"]

    @property
    def num_rows(self) -> int | None:
        return sum(self.sizes) if self.known else None

    def chunks(self) -> Iterator[pa.Table]:
        start = 0
        for size in self.sizes:
            self.reads += 1
            yield pa.table({"x": list(range(start, start + size))})
            start += size


def rows(source: Source) -> list[int]:
    return [v for chunk in source.chunks() for v in chunk.column("x").to_pylist()]


def first_rows(source: Source) -> int:
    """What the plan-time checks do: read up to the first chunk, then stop."""
    return next(iter(source.chunks())).num_rows


def test_a_source_of_one_chunk_is_read_once_however_often_it_is_asked():
    inner = Counted([5])
    held = FirstChunkHeld(inner)
    assert first_rows(held) == 5 and first_rows(held) == 5
    assert rows(held) == rows(held) == list(range(5))
    assert inner.reads == 1


def test_without_a_row_count_one_more_read_tells_the_source_is_one_chunk():
    inner = Counted([5], known=False)
    held = FirstChunkHeld(inner)
    first_rows(held)
    assert rows(held) == list(range(5)) and inner.reads == 2  # read again past the held chunk: nothing more
    assert rows(held) == list(range(5)) and inner.reads == 2


def test_a_source_of_several_chunks_gives_its_rows_in_order_each_time_and_holds_only_the_first():
    inner = Counted([3, 4, 2])
    held = FirstChunkHeld(inner)
    assert first_rows(held) == 3 and inner.reads == 1
    assert rows(held) == list(range(9))
    assert rows(held) == list(range(9))
    assert inner.reads == 1 + 3 + 3  # each full pass reads the file again (the held chunk's place included)


def test_an_empty_source_gives_no_chunk_and_a_chunk_over_the_bound_is_not_held():
    assert rows(FirstChunkHeld(Counted([]))) == []
    inner = Counted([CHUNK_ROWS + 1])
    held = FirstChunkHeld(inner)
    assert len(rows(held)) == len(rows(held)) == CHUNK_ROWS + 1
    assert inner.reads == 2


def test_what_else_the_source_says_of_itself_reads_through():
    assert FirstChunkHeld(Counted([1])).files == ["a.parquet"]


def test_a_run_reads_a_parquet_file_of_one_chunk_once(tmp_path, monkeypatch):
    from olive_eval.config.run import RunConfig

    model = Path(__file__).resolve().parents[2] / "examples" / "quickstart" / "models" / "digits_fp32.onnx"
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"x": [1.0, 2.0, 3.0], "label": [0, 1, 0]}), str(path))
    run = RunConfig.model_validate(
        {
            "input_model": {"type": "ONNXModel", "model_path": str(model)},
            "data_configs": [{"name": "d", "load_dataset_config": {"data_name": "parquet", "data_files": str(path)}}],
            "metrics": [
                {"name": "acc", "type": "accuracy", "data_config": "d", "sub_types": [{"name": "accuracy_score"}]}
            ],
        }
    )
    opened: list[str] = []
    real = pq.ParquetFile.iter_batches

    def counted(self, *args, **kwargs):
        opened.append("read")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", counted)
    store = DataStore(run)
    source = store.source("d")
    assert isinstance(source, FirstChunkHeld)
    assert first_rows(source) == 3 and rows(source) == [1.0, 2.0, 3.0] and rows(source) == [1.0, 2.0, 3.0]
    assert len(opened) == 1


# ------------------------------------------------------------------ kept between the runs of one process
@pytest.fixture
def kept():
    KEPT.clear()
    yield KEPT
    KEPT.clear()


def settled(path: Path, seconds_ago: int) -> Path:
    """The file as if written ``seconds_ago`` (the kept tables leave a file alone for 2 s after a change)."""
    past = time.time_ns() - seconds_ago * 1_000_000_000
    os.utime(path, ns=(past, past))
    return path


def one_chunk_run(path: Path, builder: str = "parquet") -> Any:
    from olive_eval.config.run import RunConfig

    model = Path(__file__).resolve().parents[2] / "examples" / "quickstart" / "models" / "digits_fp32.onnx"
    return RunConfig.model_validate(
        {
            "input_model": {"type": "ONNXModel", "model_path": str(model)},
            "data_configs": [{"name": "d", "load_dataset_config": {"data_name": builder, "data_files": str(path)}}],
            "metrics": [
                {"name": "acc", "type": "accuracy", "data_config": "d", "sub_types": [{"name": "accuracy_score"}]}
            ],
        }
    )


def counted_reads(monkeypatch) -> list[str]:
    opened: list[str] = []
    real = pq.ParquetFile.iter_batches

    def counted(self, *args, **kwargs):
        opened.append("read")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", counted)
    return opened


def test_a_later_run_finds_an_unchanged_one_chunk_file_kept_and_a_changed_one_read_again(tmp_path, monkeypatch, kept):
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"x": [1.0, 2.0, 3.0], "label": [0, 1, 0]}), str(path))
    run = one_chunk_run(settled(path, 60))
    opened = counted_reads(monkeypatch)
    assert rows(DataStore(run).source("d")) == [1.0, 2.0, 3.0] and len(opened) == 1 and len(kept) == 1
    assert rows(DataStore(run).source("d")) == [1.0, 2.0, 3.0] and len(opened) == 1  # the next run reads nothing
    pq.write_table(pa.table({"x": [7.0, 8.0, 9.0], "label": [0, 1, 0]}), str(path))  # other values
    settled(path, 30)
    assert rows(DataStore(run).source("d")) == [7.0, 8.0, 9.0] and len(opened) == 2


def test_a_file_changed_in_the_last_two_seconds_is_read_each_run(tmp_path, monkeypatch, kept):
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"x": [1.0, 2.0], "label": [0, 1]}), str(path))
    run = one_chunk_run(path)
    opened = counted_reads(monkeypatch)
    assert rows(DataStore(run).source("d")) == rows(DataStore(run).source("d")) == [1.0, 2.0]
    assert len(opened) == 2 and len(kept) == 0


def test_a_small_json_file_is_known_to_be_one_chunk_at_its_first_read_and_kept(tmp_path, kept):
    path = tmp_path / "d.jsonl"
    path.write_text("".join(f'{{"x": {i}, "label": 0}}\n' for i in range(4)))
    run = one_chunk_run(settled(path, 60), "json")
    store = DataStore(run)
    first_rows(store.source("d"))
    assert len(kept) == 1  # its reader was at the end with the first chunk
    assert rows(store.source("d")) == [0, 1, 2, 3]
    assert rows(DataStore(run).source("d")) == [0, 1, 2, 3]


def counted_json_reads(monkeypatch) -> list[str]:
    """The full reads of json files (not the schema read that opens a source)."""
    from olive_eval.data import sources

    opened: list[str] = []
    real = sources.read_json

    def counted(path: str, name: str, schema_only: bool = False) -> Iterator[pa.Table]:
        if not schema_only:
            opened.append(path)
        return real(path, name, schema_only)

    monkeypatch.setattr(sources, "read_json", counted)
    return opened


@pytest.mark.parametrize("builder", ["json", "csv"])
def test_a_small_json_or_csv_file_is_read_once_for_the_checks_and_every_pass(tmp_path, monkeypatch, builder):
    path = tmp_path / f"d.{builder}l"
    if builder == "json":
        path.write_text("".join(f'{{"x": {i}, "label": 0}}\n' for i in range(5)))
        opened = counted_json_reads(monkeypatch)
    else:
        path.write_text("x,label\n" + "".join(f"{i},0\n" for i in range(5)))
        import pyarrow.csv as pcsv

        opened = []
        real = pcsv.open_csv
        monkeypatch.setattr(pcsv, "open_csv", lambda *a, **k: opened.append("read") or real(*a, **k))
    source = DataStore(one_chunk_run(path, builder)).source("d")  # changed just now: not kept between runs
    reads = len(opened)  # a csv source's schema is read with open_csv too
    assert first_rows(source) == 5 and rows(source) == rows(source) == list(range(5))
    assert len(opened) == reads + 1


def test_a_json_file_over_the_peek_bound_is_known_to_be_one_chunk_by_the_first_pass(tmp_path, monkeypatch):
    from olive_eval.engine.run import data_store

    path = tmp_path / "d.jsonl"
    path.write_text("".join(f'{{"x": {i}, "label": 0}}\n' for i in range(5)))
    monkeypatch.setattr(data_store, "PEEK_BYTES", path.stat().st_size - 1)
    opened = counted_json_reads(monkeypatch)
    source = DataStore(one_chunk_run(path, "json")).source("d")
    assert first_rows(source) == 5 and len(opened) == 1
    assert rows(source) == rows(source) == list(range(5)) and len(opened) == 2  # read again past it, once


def test_a_small_source_of_two_files_gives_both_in_order_after_the_peek(tmp_path, monkeypatch):
    from olive_eval.config.run import RunConfig

    paths = [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    for n, path in enumerate(paths):
        path.write_text("".join(f'{{"x": {10 * n + i}, "label": 0}}\n' for i in range(3)))
    run = one_chunk_run(paths[0], "json")
    dataset = run.data_configs[0].load_dataset_config.model_copy(update={"data_files": [str(p) for p in paths]})
    run = RunConfig.model_validate(
        {**run.model_dump(by_alias=True), "data_configs": [{"name": "d", "load_dataset_config": dataset}]}
    )
    opened = counted_json_reads(monkeypatch)
    source = DataStore(run).source("d")
    assert first_rows(source) == 3 and len(opened) == 2  # the second file read to find that more follows
    assert rows(source) == rows(source) == [0, 1, 2, 10, 11, 12]


def test_the_kept_tables_are_bounded_in_count_and_bytes_least_recently_used_first():
    tables = {k: pa.table({"x": np.arange(100, dtype=np.int64)}) for k in "abc"}
    keys = {k: (k, ()) for k in tables}
    few = KeptChunks(max_tables=2, max_bytes=10**6)
    few.put(keys["a"], tables["a"])
    few.put(keys["b"], tables["b"])
    assert few.get(keys["a"]) is tables["a"]  # now the most recently used
    few.put(keys["c"], tables["c"])
    assert few.get(keys["b"]) is None and few.get(keys["a"]) is tables["a"] and len(few) == 2
    small = KeptChunks(max_tables=4, max_bytes=1500)
    small.put(keys["a"], tables["a"])
    small.put(keys["b"], tables["b"])
    assert small.get(keys["a"]) is None and small.get(keys["b"]) is tables["b"]  # 800 + 800 bytes > 1500
    small.put(keys["c"], pa.table({"x": np.arange(1000, dtype=np.int64)}))  # over the bound alone: not kept
    assert small.get(keys["c"]) is None and len(small) == 1
    small.put(None, tables["a"])
    assert small.get(None) is None and len(small) == 1


def test_a_file_that_cannot_be_looked_at_has_no_key(tmp_path):
    assert files_key("parquet", [str(tmp_path / "missing.parquet")]) is None


class CountedRows(Counted):
    """Counts how often its row count is asked (a parquet source reads the files' footers each time)."""

    asked = 0

    @property
    def num_rows(self) -> int | None:
        self.asked += 1
        return None if not self.known else sum(self.sizes)


@pytest.mark.parametrize(("sizes", "known"), [([5], True), ([5], False), ([3, 4], True)])
def test_the_sources_row_count_is_asked_once_for_the_run(sizes, known):
    inner = CountedRows(sizes, known=known)
    held = FirstChunkHeld(inner)
    for _ in range(3):  # the plan's checks and two models' passes
        rows(held)
        assert held.num_rows == (sum(sizes) if known else None)
    assert inner.asked == 1
