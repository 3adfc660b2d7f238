"""Filters that take the documents, as lm-eval's ``Filter.apply(self, resps, docs)`` does (issue 32, seed 001):
a Filter subclass with ``apply(self, predictions, docs)`` and a function filter with a ``doc`` parameter, on their
own and in a run, where each example's row is the data's columns for that example.

The reference is lm-eval's own ``FilterEnsemble``: it hands a filter each instance's ``doc`` beside its responses;
the same filter logic run through it gives the same answers as through olive-eval.
"""

from __future__ import annotations

import textwrap
from typing import Any

import numpy as np
import pytest
from lm_eval.api.filter import Filter as LmEvalFilter
from lm_eval.api.filter import FilterEnsemble
from lm_eval.api.instance import Instance

from olive_eval import evaluate
from olive_eval.data.filters import Filter, Repeats, apply_filters, build_filters, filter_registry, register_filter
from olive_eval.engine.passes.fields import example_rows, row_columns
from olive_eval.metrics import metric_registry
from olive_eval.records.parquet import read_records
from tests.helpers import write_jsonl

BUILTINS = "lowercase, majority_vote, map, regex, remove_punctuation, strip, take_first, uppercase"


def without_question(prediction: str, question: str) -> str:
    return prediction.removeprefix(question).strip()


class StripQuestion(Filter):
    """The model echoes the question before its answer: cut it off (the question is a field of the doc)."""

    def apply(self, predictions: list[Any], docs: list[dict[str, Any]]) -> list[Any]:
        out: list[Any] = []
        for entry, doc in zip(predictions, docs, strict=True):
            if isinstance(entry, Repeats):
                out.append(Repeats(without_question(p, doc["question"]) for p in entry))
            else:
                out.append(without_question(entry, doc["question"]))
        return out


def strip_question(prediction: str, doc: dict[str, Any]) -> str:
    return without_question(prediction, doc["question"])


@pytest.fixture
def user_filters():
    names: list[str] = []
    yield names
    for name in names:
        filter_registry.unregister(name)
    assert filter_registry.names() == BUILTINS.split(", ")


DOCS = [{"question": "What is 2+3?", "answer": "5"}, {"question": "Name a colour.", "answer": "red"}]
ECHOED = ["What is 2+3? 5", Repeats(["Name a colour.  red", "Name a colour. blue"])]


def test_a_filter_class_with_docs_equals_lm_evals_ensemble(user_filters):
    register_filter("strip_question")(StripQuestion)
    user_filters.append("strip_question")
    built = build_filters([{"type": "strip_question"}, {"type": "take_first"}])
    assert [f.takes_docs for f in built] == [True, False]
    ours = apply_filters(built, ECHOED, DOCS)
    assert ours == ["5", "red"]

    class LmEvalStripQuestion(LmEvalFilter):  # the same logic, as lm-eval holds it: a list of responses per doc
        def apply(self, resps, docs):
            return [[without_question(r, doc["question"]) for r in rs] for rs, doc in zip(resps, docs, strict=True)]

    instances = [
        Instance("generate_until", doc, ("", {}), i, resps=list(p) if isinstance(p, Repeats) else [p])
        for i, (doc, p) in enumerate(zip(DOCS, ECHOED, strict=True))
    ]
    FilterEnsemble("strip", [LmEvalStripQuestion]).apply(instances)
    assert [inst.filtered_resps["strip"][0] for inst in instances] == ours


def test_a_function_filter_with_a_doc_parameter(user_filters):
    assert register_filter("strip_question_fn")(strip_question) is strip_question
    user_filters.append("strip_question_fn")
    built = build_filters([{"type": "strip_question_fn"}])
    assert built[0].takes_docs
    assert apply_filters(built, ECHOED, DOCS) == ["5", ["red", "blue"]]
    # a filter that takes no docs ignores them; a chain mixes both
    mixed = build_filters([{"type": "uppercase"}, {"type": "strip_question_fn"}])
    assert apply_filters(mixed, ["what is 2+3? 5"], [{"question": "WHAT IS 2+3?"}]) == ["5"]


def test_a_docs_filter_without_docs_is_a_clear_error(user_filters):
    register_filter("strip_question_fn")(strip_question)
    user_filters.append("strip_question_fn")
    built = build_filters([{"type": "strip"}, {"type": "strip_question_fn"}])
    with pytest.raises(ValueError) as info:
        apply_filters(built, ["a"])
    assert str(info.value) == "filter 'strip_question_fn' takes the examples' rows (docs), which were not given"
    with pytest.raises(ValueError) as info:
        apply_filters(built, ["a", "b"], DOCS[:1])
    assert str(info.value) == "filters: 1 rows for 2 examples"
    assert apply_filters(build_filters([{"type": "strip"}]), [" a "]) == ["a"]  # no docs needed: none asked


def test_a_function_filter_naming_docs_is_refused(user_filters):
    def per_prediction(prediction, docs):
        return prediction

    with pytest.raises(TypeError) as info:
        register_filter("all_docs")(per_prediction)
    assert str(info.value) == (
        "@register_filter('all_docs'): a filter function gets one example's row at a time: name its parameter "
        "'doc', not 'docs' (or subclass Filter with apply(self, predictions, docs) for all of them)"
    )
    assert "all_docs" not in filter_registry.names()


def test_rows_are_the_data_columns_as_python_values():
    fields = {
        "question": ["q0", "q1"],
        "id": np.array([7, 8]),
        "features": np.array([[1.0, 2.0], [3.0, 4.0]]),
        "references": ["a", "b"],
        "prediction": ["x", "y"],
        "logits": np.zeros((2, 3)),
        "inference_seconds": np.ones(2),
        "model_seconds": np.ones(2),
        "batch_index": np.zeros(2, dtype=int),
        "output.hidden": np.zeros((2, 4)),
        "baseline.prediction": ["x", "y"],
    }
    assert row_columns(fields) == ["question", "id", "features"]
    rows = example_rows(fields)
    assert [{k: v for k, v in r.items() if k != "features"} for r in rows] == [
        {"question": "q0", "id": 7},
        {"question": "q1", "id": 8},
    ]
    assert type(rows[0]["id"]) is int
    assert rows[1]["features"].tolist() == [3.0, 4.0]


# ------------------------------------------------------------------------------ in a run

MODELS = textwrap.dedent(
    '''
    class Echo:
        """Repeats the question, then answers: right on even rows, wrong on odd ones."""

        def __call__(self, batch):
            return [
                f"{q} {a if i % 2 == 0 else 'no idea'}"
                for i, q, a in zip(batch["row"], batch["question"], batch["answer"])
            ]


    def load_echo(model_path):
        return Echo()
    '''
)

METRICS = textwrap.dedent(
    """
    from olive_eval import register_metric
    from olive_eval.data.filters import Filter, register_filter


    @register_metric(name="docs_exact", higher_is_better=True, kind="instance")
    def docs_exact(prediction, reference):
        return float(prediction == reference)


    @register_filter("cut_question")
    class CutQuestion(Filter):
        def apply(self, predictions, docs):
            return [p.removeprefix(doc["question"]).strip() for p, doc in zip(predictions, docs)]


    @register_filter("cut_question_fn")
    def cut_question_fn(prediction, doc):
        assert set(doc) == {"row", "question", "answer", "topic"}, sorted(doc)
        return prediction.removeprefix(doc["question"]).strip()
    """
)


@pytest.fixture
def run_config(tmp_path):
    (tmp_path / "models.py").write_text(MODELS)
    (tmp_path / "metrics.py").write_text(METRICS)
    rows = [{"row": i, "question": f"What is {i} + 1?", "answer": str(i + 1), "topic": "sums"} for i in range(10)]
    data = write_jsonl(tmp_path / "d.jsonl", rows)

    def config(filters: list[dict]) -> dict:
        sub = {"name": "docs_exact", "priority": 1}
        return {
            "input_model": {
                "type": "PythonModel",
                "name": "m",
                "user_script": str(tmp_path / "models.py"),
                "model_loader": "load_echo",
            },
            "data_configs": [
                {
                    "name": "d",
                    "load_dataset_config": {"data_name": "json", "data_files": str(data)},
                    "pre_process_data_config": {"type": "skip_pre_process", "label_col": "answer"},
                    "dataloader_config": {"batch_size": 3},
                }
            ],
            "evaluator": {
                "user_script": str(tmp_path / "metrics.py"),
                "metrics": [
                    {"name": "qa", "type": "accuracy", "data_config": "d", "sub_types": [sub], "filters": filters}
                ],
            },
            "output_dir": str(tmp_path / "out"),
        }

    yield config
    metric_registry.unregister("docs_exact")
    for name in ("cut_question", "cut_question_fn"):
        if name in filter_registry.names():
            filter_registry.unregister(name)


@pytest.mark.parametrize("name", ["cut_question", "cut_question_fn"])
def test_a_docs_filter_in_a_run_reads_each_examples_row(run_config, tmp_path, name):
    plain = evaluate(run_config([]))
    assert plain.models["m"].metrics["qa-docs_exact"].value == 0.0  # the echoed question spoils every answer
    result = evaluate(run_config([{"type": name}]))
    assert result.models["m"].metrics["qa-docs_exact"].value == 0.5  # even rows of 10 answer right
    records = list(read_records(tmp_path / "out" / "instances" / "m" / "qa.parquet"))
    assert [r["prediction"] for r in records[:3]] == ["1", "no idea", "3"]
