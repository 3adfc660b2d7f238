"""JSON data files that pyarrow cannot read: the error names the data config, the file, and the line or record."""

from __future__ import annotations

import re

import pytest

from olive_eval.data.components import build
from olive_eval.data.huggingface_dataset import HuggingfaceDatasetParams
from olive_eval.data.sources import DataContext
from olive_eval.errors import EvaluationError


def read_all(path) -> int:
    """Rows of the file as the json builder reads them."""
    params = HuggingfaceDatasetParams(type="huggingface_dataset", data_name="json", data_files=str(path))
    source = build("dataset", params).open("d", DataContext())
    return sum(chunk.num_rows for chunk in source.chunks())


@pytest.mark.parametrize(
    ("text", "fault"),
    [
        ('{"a": 1}\n[1, 2]\n', "line 2 is a list, not an object of columns"),
        ('{"a": 1}\n\n{"a": true}\n', "column 'a' holds a boolean at line 3 but a number at line 1"),
        (
            '[{"a": "x"}, {"a": null}, {"a": {"b": 1}}]',
            "column 'a' holds an object at record 2 but a string at record 0",
        ),
        ('[{"a": 1}, 7]', "record 1 is a number, not an object of columns"),
        ('[{"a": 1},\n {"a": }]', "line 2 is not valid JSON: Expecting value (column 8)"),
    ],
)
def test_the_first_fault_is_named(tmp_path, text, fault):
    path = tmp_path / "d.json"
    path.write_text(text)
    with pytest.raises(EvaluationError, match=f"^data config 'd': {re.escape(str(path))}: {re.escape(fault)}"):
        read_all(path)
