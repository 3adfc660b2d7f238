"""``register_metric(prediction_type=..., single_reference_per_prediction=...)``: Unitxt's checks on a metric's
inputs, on every example, with one line that names the example that does not fit."""

from __future__ import annotations

import textwrap
from typing import List  # noqa: UP035 - the typing alias is one of the spellings a user may give

import numpy as np
import onnx
import pytest
from onnx import numpy_helper
from sklearn.metrics import accuracy_score

from olive_eval import evaluate
from olive_eval.errors import EvaluationError
from olive_eval.metrics import get_metric, metric_registry, register_metric


@pytest.fixture
def name(request):
    """A metric name unique to the test, removed from the registry afterwards."""
    out = "pt_" + request.node.name.replace("[", "_").replace("]", "_").replace("-", "_").replace(".", "_")
    yield out
    if out in metric_registry.names():
        metric_registry.unregister(out)


def equal(name: str, **options):
    """An exact-match metric registered with ``options``; it records what its function received."""
    seen: list = []

    @register_metric(name=name, higher_is_better=True, **options)
    def exact(prediction, reference) -> float:
        seen.append(reference)
        return float(prediction == reference)

    return seen


def error_of(name: str, predictions, references) -> str:
    with pytest.raises(EvaluationError) as info:
        get_metric(name).compute(predictions, references)
    message = str(info.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize("spec", [int, "int"])
def test_a_prediction_of_another_type_names_its_example(name, spec):
    equal(name, prediction_type=spec)
    message = error_of(name, [3, 3.5, 5], [3, 4, 5])
    assert message == f"metric '{name}' takes predictions of type int; instance 1's prediction 3.5 is float"


def test_without_prediction_type_the_same_input_is_scored(name):
    """The option is what refuses: the same metric registered without it scores the float (as sklearn does)."""
    equal(name)
    predictions, references = [3, 3.5, 5], [3, 4, 5]
    assert get_metric(name).compute(predictions, references).value == pytest.approx(
        accuracy_score([str(r) for r in references], [str(p) for p in predictions])
    )


def test_numpy_values_count_as_their_python_values(name):
    equal(name, prediction_type=int)
    rng = np.random.default_rng(0)
    predictions, references = rng.integers(0, 3, 50), rng.integers(0, 3, 50)
    value = get_metric(name).compute(predictions, references).value
    assert value == pytest.approx(accuracy_score(references, predictions))


@pytest.mark.parametrize(
    "prediction, fits",
    [(2, True), (2.5, True), (float("nan"), True), (np.float32(1.5), True), (True, False), ("2.5", False)],
)
def test_float_takes_ints_and_nan_but_not_bools_or_text(name, prediction, fits):
    equal(name, prediction_type=float)
    if fits:
        get_metric(name).compute([prediction], [2.0])
    else:
        assert "instance 0's prediction" in error_of(name, [prediction], [2.0])


@pytest.mark.parametrize("spec", [list[str], List[str], "list[str]", "List[str]"])  # noqa: UP006
def test_list_of_class_names(name, spec):
    """Multi-label predictions: a list of class names per example; a reference is one such list."""
    seen = equal(name, prediction_type=spec)
    predictions = [["cat", "dog"], ["dog"], []]
    references = [["cat", "dog"], ["cat"], []]
    assert get_metric(name).compute(predictions, references).value == pytest.approx(2 / 3)
    assert seen == references  # a list[str] reference is one reference, passed as it is
    message = error_of(name, [["cat"], ["cat", 3]], [["cat"], ["cat"]])
    assert message == f"metric '{name}' takes predictions of type list[str]; instance 1's prediction ['cat', 3] is list"


def test_references_are_not_held_to_the_prediction_type(name):
    """A classifier's prediction (logits) and its reference (a class index) differ in type: only predictions are
    checked."""
    seen = equal(name, prediction_type=list[float])
    get_metric(name).compute([[0.1, 0.9], [0.3, 0.7]], [1, "x"])
    assert seen == [1, "x"]


def test_several_class_name_lists_are_several_references(name):
    seen = equal(name, prediction_type="list[str]", single_reference_per_prediction=True)
    get_metric(name).compute([["cat"], ["dog", "cat"]], [["cat"], [["dog", "cat"]]])
    assert seen == [["cat"], ["dog", "cat"]]
    message = error_of(name, [["cat"]], [[["cat"], ["dog"]]])
    assert message == f"metric '{name}' takes one reference per prediction; instance 0 has 2: [['cat'], ['dog']]"


def test_one_reference_per_prediction_is_refused_beyond_one(name):
    equal(name, prediction_type=str, single_reference_per_prediction=True)
    message = error_of(name, ["a", "b", "c"], ["a", ["b"], ["c", "d"]])
    assert message == f"metric '{name}' takes one reference per prediction; instance 2 has 2: ['c', 'd']"
    assert error_of(name, ["a"], [[]]).endswith("instance 0 has 0: []")


def test_one_reference_in_a_list_reaches_the_function_unwrapped(name):
    """Unitxt's SumAccuracy references ``[[5], [800], [50]]``: each example's function sees the number."""
    seen = equal(name, prediction_type=int, single_reference_per_prediction=True)
    value = get_metric(name).compute([5, 799, 50], [[5], np.array([800]), 50]).value
    assert seen == [5, 800, 50] and all(type(r) is int for r in seen)
    assert value == pytest.approx(accuracy_score([5, 800, 50], [5, 799, 50]))


def test_single_reference_without_a_type_counts_lists(name):
    equal(name, single_reference_per_prediction=True)
    assert error_of(name, [1, 2], [[1], [2, 3]]).endswith("instance 1 has 2: [2, 3]")


def test_a_global_metric_is_checked_too(name):
    @register_metric(name=name, higher_is_better=True, kind="global", prediction_type=float)
    def mean_error(predictions, references) -> float:
        return float(np.mean(np.abs(np.asarray(predictions, dtype=float) - np.asarray(references, dtype=float))))

    rng = np.random.default_rng(1)
    p, r = rng.random(20), rng.random(20)
    assert get_metric(name).compute(p, r).value == pytest.approx(np.mean(np.abs(p - r)))
    assert "instance 4's prediction 'x' is str" in error_of(name, [0.1, 0.2, 0.3, 0.4, "x"], [0.0] * 5)


@pytest.mark.parametrize("spec", ["tensor", "list[tensor]", set, 3])
def test_an_unknown_prediction_type_is_refused_at_registration(name, spec):
    with pytest.raises(ValueError) as info:
        equal(name, prediction_type=spec)
    message = str(info.value)
    assert message.startswith(f"metric '{name}': prediction_type ") and "not one of str, int, float" in message
    assert "\n" not in message and name not in metric_registry.names()


SCRIPT = textwrap.dedent(
    """
    import numpy as np
    from olive_eval import register_metric

    @register_metric(name="{name}", higher_is_better=True, prediction_type="{spec}")
    def hit(prediction, reference):
        return float(int(np.argmax(prediction)) == reference)
    """
)


@pytest.mark.parametrize("spec", ["list[float]", "str"])
def test_in_a_run_the_sub_type_fails_with_the_line(toy, name, spec):
    """The toy classifier's predictions are its logits: a list[float] metric scores them (= scikit-learn on the
    candidate's own weights), a str metric fails alone with the line naming the first example (partial)."""
    script = toy.root / "plugin.py"
    script.write_text(SCRIPT.format(name=name, spec=spec))
    metric = {
        "name": "user",
        "type": "accuracy",
        "data_config": "toy",
        "sub_types": [{"name": name, "priority": 1}],
        "user_config": {"user_script": str(script)},
    }
    size = {"name": "size", "type": "size_on_disk", "sub_types": [{"name": "bytes"}]}
    base = evaluate(toy.config({"a": 0.5}, [metric, size])).models["a"]
    sub = base.metrics[f"user-{name}"]
    if spec == "list[float]":
        assert base.status == "ok", sub.error
        weights = numpy_helper.to_array(onnx.load(str(toy.root / "a.onnx")).graph.initializer[0])
        expected = accuracy_score(toy.labels, (toy.x @ weights).argmax(axis=1))
        assert sub.value == pytest.approx(expected) and expected < 1.0
    else:
        assert base.status == "partial" and sub.value is None
        assert f"metric '{name}' takes predictions of type str; instance 0's prediction" in sub.error
        assert base.metrics["size-bytes"].value is not None
