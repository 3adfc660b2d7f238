"""``compute_metric`` (issue 16, items 4 and 21): it refuses a metric that reads pass fields it cannot give,
and its result is a float that also carries the per-class values and the details the sub-type has."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest
from sklearn.metrics import confusion_matrix, f1_score, precision_score, roc_auc_score

import olive_eval
from olive_eval import MetricValue, compute_metric
from olive_eval.metrics import metric_registry, register_metric

TOL = 1e-12


# ------------------------------------------------------------------------------------- item 4: pass fields
@pytest.mark.parametrize(
    ("name", "reads"),
    [("samples_per_second", "inference_seconds, batch_index"), ("rtfx", "audio_seconds, inference_seconds")],
)
def test_a_metric_reading_pass_timing_is_refused(name, reads):
    with pytest.raises(ValueError, match=rf"^{name} reads {reads}.* from a prediction pass; compute_metric has only"):
        compute_metric(name, [1, 2, 3], [4, 5, 6])


@pytest.fixture
def registered():
    """Metric names registered by a test, removed afterwards."""
    names: list[str] = []
    yield names
    for name in names:
        metric_registry.unregister(name)


def test_the_rule_is_what_a_metric_reads_not_its_name(registered):
    @register_metric(name="gap_per_second", higher_is_better=True, reads=("prediction", "references", "model_seconds"))
    def gap(prediction, reference, seconds):
        return (prediction - reference) / seconds

    @register_metric(name="logit_gap", higher_is_better=True, reads=("references", "logits"))
    def logit_gap(reference, logits):
        return float(logits[reference] - np.delete(logits, reference).max())

    registered += ["gap_per_second", "logit_gap"]
    with pytest.raises(ValueError, match=r"^gap_per_second reads prediction, references, model_seconds from a "):
        compute_metric("gap_per_second", [1.0], [0.5])
    logits, refs = np.random.default_rng(0).normal(size=(20, 3)), np.random.default_rng(1).integers(0, 3, 20)
    expected = np.mean([row[r] - np.delete(row, r).max() for row, r in zip(logits, refs, strict=True)])
    assert compute_metric("logit_gap", logits, refs) == pytest.approx(expected, abs=TOL)  # fields given by name


# ------------------------------------------------------------------------------------- item 21: the result
def test_the_result_is_a_float_with_per_class_values():
    rng = np.random.default_rng(2)
    refs, preds = rng.integers(0, 4, 300), rng.integers(0, 4, 300)
    result = compute_metric("f1_score", preds, refs, average="none")
    assert isinstance(result, float) and isinstance(result, MetricValue)
    np.testing.assert_allclose(result.per_class, f1_score(refs, preds, average=None), rtol=0, atol=TOL)
    assert result == pytest.approx(f1_score(refs, preds, average="macro"), abs=TOL)
    assert result.value == float(result) and result.undefined is None
    assert json.loads(json.dumps({"f1": result}))["f1"] == float(result)
    again = pickle.loads(pickle.dumps(result))
    assert again == result and again.per_class == result.per_class and again.name == "f1_score"
    assert repr(result).startswith(f"MetricValue(f1_score={float(result)!r}, per_class=[")


def test_per_class_values_on_edge_cases():
    # class 2 never predicted, class 3 nowhere: scikit-learn's zero_division=0 and the configured classes
    refs, preds = np.array([0, 1, 2, 2, 1]), np.array([0, 1, 1, 0, 1])
    result = compute_metric("precision", preds, refs, average="none", num_classes=4)
    expected = precision_score(refs, preds, average=None, labels=[0, 1, 2, 3], zero_division=0)
    np.testing.assert_allclose(result.per_class, expected, rtol=0, atol=TOL)
    binary = compute_metric("precision", [1, 1, 0], [1, 0, 0], average="none")
    assert binary.per_class == [0.5] and binary == 0.5
    plain = compute_metric("accuracy_score", [1, 1, 0], [1, 0, 0])
    assert (
        plain.per_class is None
        and plain.details is None
        and repr(plain) == "MetricValue(accuracy_score=0.6666666666666666)"
    )


def test_a_structured_sub_type_gives_its_structure():
    rng = np.random.default_rng(3)
    weights = rng.integers(1, 6, (200, 3)).astype(np.float64)
    s, y = weights / weights.sum(axis=1, keepdims=True), rng.integers(0, 3, 200)
    result = compute_metric("confusion_matrix", s, y, class_names=["a", "b", "c"])
    assert np.isnan(result) and "structured" in result.undefined
    ours = [[result.details["confusion_matrix"][r][p] for p in "abc"] for r in "abc"]
    np.testing.assert_array_equal(ours, confusion_matrix(y, np.argmax(s, axis=1), labels=[0, 1, 2]))
    curve = compute_metric("pr_curve", s, y, score_thresholds=[0.5])
    for c in range(3):
        tn, fp, fn, tp = confusion_matrix(y == c, s[:, c] >= 0.5, labels=[False, True]).ravel()
        assert {k: curve.details[str(c)]["0.5"][k] for k in ("tp", "fp", "fn", "tn")} == {
            "tp": tp,
            "fp": fp,
            "fn": fn,
            "tn": tn,
        }
    assert "details={" in repr(result) and len(repr(curve)) < 400


def test_named_per_class_values_come_with_roc_auc():
    rng = np.random.default_rng(4)
    weights = rng.integers(1, 6, (200, 3)).astype(np.float64)
    s, y = weights / weights.sum(axis=1, keepdims=True), rng.integers(0, 3, 200)
    result = olive_eval.compute_metric("roc_auc", s, y, class_names=["a", "b", "c"])
    expected = [roc_auc_score(y == c, s[:, c]) for c in range(3)]
    np.testing.assert_allclose(result.per_class, expected, rtol=0, atol=TOL)
    assert result.details["per_class"] == pytest.approx(dict(zip("abc", expected, strict=True)), abs=TOL)
