"""results.json's text in one pass is ``compact_number_lists(json.dumps(data, indent=2))``, character for
character: on a result with every field filled, on real runs' results and on random nested values."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from olive_eval import evaluate
from olive_eval.records.results_text import results_text
from tests.records.test_plain import REAL_RUN_METRICS, Pair, awkward
from tests.report import helpers

#: The writer results.json had before: ``json.dumps(indent=2)``, then each list of numbers joined onto one line by
#: a regular expression (a raw newline is never inside a JSON string, so a match is always the layout's own).
NUMBER = r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
NUMBER_LIST = re.compile(rf"\[\n\s*({NUMBER}(?:,\n\s*{NUMBER})*)\n\s*\]")


def compact_number_lists(text: str) -> str:
    return NUMBER_LIST.sub(lambda m: "[" + re.sub(r",\n\s*", ", ", m.group(1)) + "]", text)


def expected(data: Any) -> str:
    return compact_number_lists(json.dumps(data, indent=2))


LEAVES: list[Any] = [
    0, -7, 10**20, True, False, None, 0.0, -0.0, 1.5, 1e-05, -2.5e20, 1e16, float("nan"), float("inf"),
    float("-inf"), np.float64(0.1), np.float64("nan"), "", "text", 'quo"te\\', "line\nbreak", "ünï", "\u2028",
    "[\n  1\n]", "1, 2",
]  # fmt: skip


def random_value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.random()
    if depth > 4 or kind < 0.35:
        return rng.choice(LEAVES)
    if kind < 0.5:  # a list of numbers, the kind put on one line
        return [rng.choice([1, -2, 3.25, 1e-9, np.float64(2.0)]) for _ in range(rng.randrange(0, 5))]
    if kind < 0.75:
        items = [random_value(rng, depth + 1) for _ in range(rng.randrange(0, 4))]
        return tuple(items) if rng.random() < 0.2 else items
    keys = ["a", "b c", "ünï", 1, 2.5, True, None, float("nan")]
    return {rng.choice(keys): random_value(rng, depth + 1) for _ in range(rng.randrange(0, 4))}


def test_random_values_are_written_as_json_dumps_and_the_compaction_wrote_them() -> None:
    rng = random.Random(0)
    for _ in range(3000):
        value = random_value(rng)
        assert results_text(value) == expected(value), value


def test_a_result_with_every_field_filled_is_written_the_same() -> None:
    data = awkward().to_dict()
    data["extra"] = {"pair": Pair(1, 2.0), "nested": [[1, 2], [3], [], [[4.5]], [True, 1], [1, float("nan")]]}
    assert results_text(data) == expected(data)


@pytest.mark.parametrize("build", ["failed_and_untimed_run", "curves_run", "trade_off_run"])
def test_the_report_tests_runs_are_written_the_same(build: str, tmp_path: Path) -> None:
    result = getattr(helpers, build)(tmp_path)
    assert (tmp_path / "results.json").read_text() == expected(result.to_dict()) + "\n"


def test_a_real_runs_results_json_is_the_same(toy) -> None:
    result = evaluate(toy.config({"noisy": 0.5}, REAL_RUN_METRICS))
    written = (Path(result.output_dir) / "results.json").read_text()
    assert written == expected(result.to_dict()) + "\n"


def test_what_json_cannot_write_is_refused_alike() -> None:
    for value in ({"a": {1, 2}}, {(1, 2): 3}, [np.int64(1)]):
        with pytest.raises(TypeError):
            json.dumps(value, indent=2)
        with pytest.raises(TypeError):
            results_text(value)
