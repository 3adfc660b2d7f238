"""``check_metric`` with ``task_data`` (each example's extra fields) and ``interval_target`` (the expected bounds
of the bootstrap interval), as Unitxt's ``test_metric`` takes ``task_data`` and ``score_ci_low``/``score_ci_high``."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
from sklearn.metrics import accuracy_score

from olive_eval.metrics import metric_registry, register_metric
from olive_eval.testing import check_metric


@pytest.fixture
def name(request):
    out = "cm_" + request.node.name.replace("[", "_").replace("]", "_").replace("-", "_").replace(".", "_")
    yield out
    if out in metric_registry.names():
        metric_registry.unregister(out)


def sum_accuracy(name: str) -> None:
    """Unitxt's SumAccuracy: referenceless, the prediction against ``num1 + num2`` of the task data."""

    @register_metric(
        name=name,
        higher_is_better=True,
        prediction_type=int,
        single_reference_per_prediction=True,
        reads=("prediction", "references", "num1", "num2"),
    )
    def sum_accuracy(prediction, reference, num1, num2) -> float:
        return float(prediction == num1 + num2)


SEED_TASK_DATA = [{"num1": 2, "num2": 3}, {"num1": 300, "num2": 500}, {"num1": -25, "num2": 75}]


def test_the_seeds_sum_accuracy_example(name):
    """Unitxt's worked example: instance scores 0, 0, 1; global 1/3 with the interval [0, 1]. The bounds follow
    from the bootstrap itself: a resample of the 3 examples is all zeros with probability (2/3)^3 = 0.30 and all
    ones with (1/3)^3 = 0.037, both above the 0.025 in each tail of a 95% percentile interval."""
    sum_accuracy(name)
    result = check_metric(
        name,
        predictions=[3, 799, 50],
        references=[[5], [800], [50]],
        task_data=SEED_TASK_DATA,
        instance_targets=[0.0, 0.0, 1.0],
        global_target=1 / 3,
        interval_target=(0.0, 1.0),
    )
    assert (result.ci_low, result.ci_high) == (0.0, 1.0)
    np.testing.assert_array_equal(result.instance_scores, [0.0, 0.0, 1.0])


def test_task_data_takes_effect(name):
    """The same predictions against other task data score otherwise (= scikit-learn on the sums)."""
    sum_accuracy(name)
    rng = np.random.default_rng(0)
    num1, num2 = rng.integers(-50, 50, 40), rng.integers(-50, 50, 40)
    predictions = num1 + num2 + rng.integers(0, 2, 40)  # about half off by one
    task_data = [{"num1": int(a), "num2": int(b)} for a, b in zip(num1, num2, strict=True)]
    expected = accuracy_score(num1 + num2, predictions)
    result = check_metric(name, predictions.tolist(), [[0]] * 40, task_data=task_data, global_target=expected)
    assert 0 < result.value < 1
    columns = {"num1": num1.tolist(), "num2": (num2 + 1).tolist()}  # columns by name, shifted by one
    shifted = check_metric(name, predictions.tolist(), [[0]] * 40, task_data=columns)
    assert shifted.value == pytest.approx(accuracy_score(num1 + num2 + 1, predictions))


def test_a_global_metric_reads_task_data(name):
    """A weighted accuracy over the whole set, its weights from the task data: = scikit-learn's sample_weight;
    its interval (recomputed on each resample) = scipy's paired bootstrap within the Monte Carlo error."""

    @register_metric(name=name, higher_is_better=True, kind="global", reads=("prediction", "references", "weight"))
    def weighted_accuracy(predictions, references, weight) -> float:
        hits = np.asarray(predictions) == np.asarray(references)
        return float(np.sum(hits * weight) / np.sum(weight))

    rng = np.random.default_rng(1)
    p, r, w = rng.integers(0, 3, 120), rng.integers(0, 3, 120), rng.random(120)
    expected = accuracy_score(r, p, sample_weight=w)
    settings = {"n_resamples": 4000, "seed": 3}
    reference = scipy.stats.bootstrap(
        ((p == r).astype(float), w),
        lambda hits, weights: np.sum(hits * weights) / np.sum(weights),
        paired=True,
        vectorized=False,
        n_resamples=4000,
        method="percentile",
        random_state=np.random.default_rng(3),
    ).confidence_interval
    result = check_metric(
        name,
        p,
        r,
        task_data=[{"weight": float(x)} for x in w],
        global_target=expected,
        interval_target=(reference.low, reference.high),
        confidence_interval=settings,
        interval_atol=0.01,
    )
    assert result.ci_low < expected < result.ci_high


def test_the_interval_of_a_mean_agrees_with_scipy():
    """A built-in's interval: accuracy on random labels, against scipy's percentile bootstrap of the hits."""
    rng = np.random.default_rng(2)
    r = rng.integers(0, 2, 300)
    p = np.where(rng.random(300) < 0.8, r, 1 - r)
    reference = scipy.stats.bootstrap(
        ((p == r).astype(float),),
        np.mean,
        n_resamples=20000,
        method="percentile",
        random_state=np.random.default_rng(0),
    ).confidence_interval
    result = check_metric(
        "accuracy_score",
        p,
        r,
        metric_config={"task": "binary"},
        interval_target=(reference.low, reference.high),
        confidence_interval={"n_resamples": 20000},
        interval_atol=0.01,
    )
    assert result.ci_low < result.value < result.ci_high


def test_a_wrong_interval_target_fails(name):
    sum_accuracy(name)
    with pytest.raises(AssertionError, match=f"confidence interval of '{name}'"):
        check_metric(name, [3, 799, 50], [[5], [800], [50]], task_data=SEED_TASK_DATA, interval_target=(0.0, 0.9))
    with pytest.raises(AssertionError, match=f"confidence interval of '{name}'"):  # within a tolerance, still not
        check_metric(
            name,
            [3, 799, 50],
            [[5], [800], [50]],
            task_data=SEED_TASK_DATA,
            interval_target=(0.05, 1.0),
            interval_atol=0.01,
        )
    check_metric(
        name, [3, 799, 50], [[5], [800], [50]], task_data=SEED_TASK_DATA, interval_target=(0.004, 1), interval_atol=0.01
    )


@pytest.mark.parametrize(
    "task_data, message",
    [
        (
            [{"num1": 2, "num2": 3}, {"num1": 300}, {"num1": 1, "num2": 1}],
            "task_data[1] has no 'num2' (other examples give it)",
        ),
        ([{"num1": 2, "num2": 3}], "task_data has 1 examples for 3 predictions"),
        ({"num1": [1, 2, 3], "num2": [1]}, "task_data['num2'] has 1 values for 3 predictions"),
        ([{"num1": 2}] * 3, "reads 'num2', which task_data does not give"),
    ],
)
def test_task_data_that_does_not_fit_is_one_line(name, task_data, message):
    sum_accuracy(name)
    with pytest.raises(ValueError) as info:
        check_metric(name, [3, 799, 50], [[5], [800], [50]], task_data=task_data)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_bad_interval_settings_are_refused(name):
    sum_accuracy(name)
    with pytest.raises(ValueError, match="n_resamples"):
        check_metric(
            name,
            [3, 799, 50],
            [[5], [800], [50]],
            task_data=SEED_TASK_DATA,
            interval_target=(0, 1),
            confidence_interval={"n_resamples": 1},
        )
