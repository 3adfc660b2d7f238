"""``roc_auc`` with ``convention: valor`` against valor-lite's own ``Evaluator.compute_rocauc`` (``ROCAUC`` per
label, ``mROCAUC``) on randomized data, and the default against scikit-learn in the same tests; issue 35's vector;
the option through a bootstrap."""

from __future__ import annotations

import numpy as np
import pytest
import sklearn.metrics as skm
from valor_lite.classification import Classification, Loader, MetricType

from olive_eval.config import load_run_config
from olive_eval.errors import ConfigError
from olive_eval.metrics import get_metric
from olive_eval.metrics.resampling import ExampleStats, confidence_interval, distribution
from olive_eval.metrics.stats import index_chunks

pytestmark = pytest.mark.filterwarnings("ignore")  # scikit-learn warns on undefined per-class values

TOL = 1e-12
SEEDS = range(300)
VALOR = {"convention": "valor"}

# issue 35: five classes, two of them without positives (0.5, 1/3, 5/6 for the other three)
ISSUE_SCORES = np.array(
    [
        [0.0, 0.0, 0.0, 0.0, 0.25],
        [0.0, 0.75, 0.75, 0.5, 0.5],
        [0.75, 0.75, 0.5, 0.75, 0.0],
        [0.75, 0.25, 0.75, 0.0, 0.0],
    ]
)
ISSUE_LABELS = np.array([0, 2, 0, 1])


def valor_rocauc(scores: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, float]:
    """valor-lite's ROCAUC per column and mROCAUC: every datum predicts every class, in column order."""
    names = [f"c{k}" for k in range(scores.shape[1])]
    loader = Loader.in_memory()
    loader.add_data(
        [
            Classification(uid=f"u{i}", groundtruth=names[y], predictions=list(names), scores=[float(v) for v in row])
            for i, (row, y) in enumerate(zip(scores, labels, strict=True))
        ]
    )
    metrics = loader.finalize().compute_rocauc()
    per_label = {m.parameters["label"]: m.value for m in metrics[MetricType.ROCAUC]}
    return np.array([per_label[n] for n in names]), metrics[MetricType.mROCAUC][0].value


def sklearn_auc(positive: np.ndarray, scores: np.ndarray) -> float:
    """scikit-learn's binary ROC AUC; NaN without positives or negatives (where it warns and refuses)."""
    return skm.roc_auc_score(positive, scores) if 0 < positive.sum() < len(positive) else float("nan")


def random_case(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scores on a coarse grid (ties, zero columns), labels from a random subset of the classes (classes
    without positives; one label for all: no negatives), one to 40 examples. Returns what the metric reads
    (``[N]`` binary scores for a quarter of the seeds) and the ``[N, C]`` columns valor-lite reads."""
    rng = np.random.default_rng(seed)
    n, c = int(rng.integers(1, 41)), int(rng.integers(2, 7))
    grid = int(rng.choice([3, 5, 101]))
    if seed % 4 == 0:  # a binary model's [N] scores: valor-lite's user passes both labels, [1 - s, s]
        s = rng.integers(0, grid, n) / (grid - 1)
        y = rng.integers(0, 2, n) if rng.random() < 0.8 else np.full(n, int(rng.integers(0, 2)))
        return s, y, np.stack([1.0 - s, s], axis=1)
    raw = rng.integers(0, grid, (n, c)).astype(np.float64)
    raw[:, rng.random(c) < 0.15] = 0.0  # columns of zeros
    if rng.random() < 0.5:  # probabilities, else raw non-negative scores
        total = raw.sum(axis=1, keepdims=True)
        raw = np.divide(raw, total, out=np.zeros_like(raw), where=total > 0)
    present = rng.choice(c, size=int(rng.integers(1, c + 1)), replace=False)
    return raw, rng.choice(present, n), raw


def test_registered_roc_auc_matches_valor_lite_on_random_data() -> None:
    checks = mismatches = undefined_somewhere = 0
    for seed in SEEDS:
        ours_in, labels, columns = random_case(seed)
        score = get_metric("roc_auc", VALOR).compute(ours_in, labels)
        per_label, mean = valor_rocauc(columns, labels)
        got = np.array(score.per_class)
        mismatches += int((np.abs(got - per_label) > TOL).sum()) + int(abs(score.value - mean) > TOL)
        checks += len(per_label) + 1
        sk = [sklearn_auc(labels == k, columns[:, k]) for k in range(columns.shape[1])]
        undefined_somewhere += int(np.isnan(sk).any())
        # the default is scikit-learn's on the same data: NaN where undefined, those left out of the mean
        default = get_metric("roc_auc").compute(columns, labels)
        np.testing.assert_allclose(default.per_class, sk, rtol=0, atol=TOL)
    print(f"\nroc_auc convention=valor vs valor-lite: {checks} checks, {mismatches} mismatches")
    assert mismatches == 0
    assert checks > 1000 and undefined_somewhere > 50  # the cases that differ from scikit-learn were drawn


def test_issue_35_vector() -> None:
    """valor-lite 1/3 (two classes without positives count 0), scikit-learn's macro mean 5/9 over the rest."""
    per_label, mean = valor_rocauc(ISSUE_SCORES, ISSUE_LABELS)
    valor = get_metric("roc_auc", VALOR).compute(ISSUE_SCORES, ISSUE_LABELS)
    assert valor.value == pytest.approx(mean, abs=TOL) == pytest.approx(1 / 3, abs=TOL)
    np.testing.assert_allclose(valor.per_class, per_label, rtol=0, atol=TOL)
    default = get_metric("roc_auc").compute(ISSUE_SCORES, ISSUE_LABELS)
    defined = [skm.roc_auc_score(np.equal(ISSUE_LABELS, k), ISSUE_SCORES[:, k]) for k in range(3)]
    assert default.value == pytest.approx(np.mean(defined), abs=TOL) == pytest.approx(5 / 9, abs=TOL)
    assert default.details["per_class"]["3"] is None and valor.details["per_class"]["3"] == 0.0
    assert default.extra["convention"] == "sklearn" and valor.extra["convention"] == "valor"


def test_binary_scores_are_two_labels_under_valor() -> None:
    """All scores 1.0: the positive class alone has AUC 0.5 (scikit-learn); valor-lite's second label, scored
    0.0 everywhere, counts 0, so its mean is 0.25."""
    s, y = np.ones(6), np.array([0, 1, 0, 1, 1, 0])
    assert get_metric("roc_auc").compute(s, y).value == pytest.approx(skm.roc_auc_score(y, s), abs=TOL) == 0.5
    per_label, mean = valor_rocauc(np.stack([1 - s, s], axis=1), y)
    valor = get_metric("roc_auc", {**VALOR, "class_names": ["neg", "pos"]}).compute(s, y)
    assert valor.value == pytest.approx(mean, abs=TOL) == 0.25
    assert valor.details["per_class"] == {"neg": per_label[0], "pos": per_label[1]}


def test_bad_convention_is_a_one_line_config_error(toy) -> None:
    sub = {"name": "roc_auc", "metric_config": {"convention": "torchmetrics"}}
    with pytest.raises(
        ConfigError, match=r"metric_config\.convention: got 'torchmetrics'; expected 'sklearn' or 'valor'$"
    ):
        load_run_config(toy.config({}, [{"name": "cls", "type": "accuracy", "sub_types": [sub]}]))


def test_bootstrap_resamples_are_valor_lites_values() -> None:
    """A GLOBAL metric recomputes each resample: each value is valor-lite's on the resampled examples."""
    rng = np.random.default_rng(7)
    raw = rng.integers(0, 5, (60, 4)).astype(np.float64)
    labels = rng.choice([0, 1, 3], 60)  # class 2 never a label: valor counts it 0 in every resample
    metric = get_metric("roc_auc", VALOR)
    sample = ExampleStats(metric, fields=(raw, labels))
    theta = distribution(sample, n_resamples=12, seed=3)
    rows = np.concatenate(list(index_chunks(60, 12, 3)))
    expected = [valor_rocauc(raw[idx], labels[idx])[1] for idx in rows]
    np.testing.assert_allclose(theta, expected, rtol=0, atol=TOL)
    value = metric.compute(raw, labels).value
    low, high = confidence_interval(sample, value, "percentile", 200, 0.9, seed=0)
    assert low <= value <= high and low < high
    default = ExampleStats(get_metric("roc_auc"), fields=(raw, labels))
    assert (distribution(default, 12, 3) > theta).all()  # the default leaves class 2 out instead of counting 0
