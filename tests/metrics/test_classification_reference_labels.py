"""``labels: "references"`` (the classes of the references only) against Unitxt 1.26.10's own ``F1Micro``,
``F1Macro`` and ``F1Weighted`` classes (precision and recall: the same classes with Unitxt's ``metric`` set, as its
``PrecisionBinary`` sets it on ``F1Binary``) and scikit-learn's ``balanced_accuracy_score``, on the issue's vector,
on random labels over many seeds, on edge cases, and on bootstrap resamples (Unitxt's intervals recompute the
metric on each resample, labels and all); the default stays scikit-learn's label set."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, balanced_accuracy_score, f1_score
from unitxt.metrics import F1Macro, F1Micro, F1Weighted

from olive_eval import compute_metric
from olive_eval.metrics import get_metric
from olive_eval.metrics.classification import stat_scores as K
from olive_eval.metrics.resampling import ExampleStats, confidence_interval, jackknife
from olive_eval.metrics.stats import index_chunks


class PrecisionMicro(F1Micro):
    metric = "precision"


class PrecisionMacro(F1Macro):
    metric = "precision"


class RecallMicro(F1Micro):
    metric = "recall"


class RecallMacro(F1Macro):
    metric = "recall"


UNITXT = {
    ("f1_score", "micro"): F1Micro(),
    ("f1_score", "macro"): F1Macro(),
    ("f1_score", "weighted"): F1Weighted(),
    ("precision", "micro"): PrecisionMicro(),
    ("precision", "macro"): PrecisionMacro(),
    ("recall", "micro"): RecallMicro(),
    ("recall", "macro"): RecallMacro(),
}
TOLERANCE = 1e-12  # scikit-learn divides in another order: the last bit may differ
PREDS = [1, 0, 4, 4, 1, 1, 1, 2, 5, 0, 4, 0, 5, 4, 1, 0, 3, 3, 1, 3]
REFS = [3, 0, 4, 4, 1, 1, 1, 1, 5, 0, 4, 0, 5, 4, 1, 0, 5, 3, 1, 3]


def unitxt(key: tuple[str, str], preds, refs) -> dict[str, float]:
    """Unitxt's class on the labels as strings, as its pipeline gives them (one reference per prediction)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn's zero-division warnings
        return UNITXT[key].compute(
            references=[[str(r)] for r in refs], predictions=[str(p) for p in preds], task_data=[{}] * len(refs)
        )


def main(key, preds, refs) -> float:
    scores = unitxt(key, preds, refs)
    return scores[UNITXT[key].main_score]


def ours(name: str, preds, refs, num_classes: int, **config) -> float:
    return compute_metric(
        name, np.asarray(preds), np.asarray(refs), num_classes=num_classes, task="multiclass", **config
    )


def random_labels(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, int]:
    """References from a random subset of the classes; predictions copy them or pick any class."""
    num_classes = int(rng.integers(2, 9))
    n = int(rng.integers(1, 60))
    used = rng.choice(num_classes, size=int(rng.integers(1, num_classes + 1)), replace=False)
    refs = rng.choice(used, size=n)
    guess = rng.integers(0, num_classes, size=n)
    preds = np.where(rng.random(n) < rng.random(), refs, guess)
    return preds, refs, num_classes


def test_the_issues_vector():
    assert main(("f1_score", "micro"), PREDS, REFS) == pytest.approx(0.8718, abs=5e-5)
    assert main(("f1_score", "macro"), PREDS, REFS) == pytest.approx(0.86)
    assert ours("f1_score", PREDS, REFS, 6, labels="references") == pytest.approx(0.8718, abs=5e-5)
    assert ours("f1_score", PREDS, REFS, 6, labels="references", average="macro") == pytest.approx(0.86)
    for key in UNITXT:
        name, average = key
        got = ours(name, PREDS, REFS, 6, labels="references", average=average)
        assert abs(got - main(key, PREDS, REFS)) <= TOLERANCE, key
    # without the option: scikit-learn's default label set, every class seen
    assert ours("f1_score", PREDS, REFS, 6) == pytest.approx(0.85)
    assert ours("f1_score", PREDS, REFS, 6, average="macro") == pytest.approx(0.7166666666666667)
    assert ours("f1_score", PREDS, REFS, 6, average="macro") == pytest.approx(f1_score(REFS, PREDS, average="macro"))


@pytest.mark.parametrize("seed", range(8))
def test_every_average_equals_unitxts_classes_on_random_labels(seed):
    rng = np.random.default_rng(seed)
    checks = dict.fromkeys([*UNITXT, ("f1_score", "none"), ("accuracy_score", "micro"), ("accuracy_score", "macro")], 0)
    mismatches = dict.fromkeys(checks, 0)
    differs = 0
    for _ in range(60):
        preds, refs, c = random_labels(rng)
        computed = {}
        for key in UNITXT:
            name, average = key
            got = ours(name, preds, refs, c, labels="references", average=average)
            computed[key] = unitxt(key, preds, refs)
            checks[key] += 1
            mismatches[key] += abs(got - computed[key][UNITXT[key].main_score]) > TOLERANCE
            differs += got != ours(name, preds, refs, c, average=average)
        per_class = ours("f1_score", preds, refs, c, labels="references", average="none").per_class
        named = computed[("f1_score", "macro")]  # Unitxt's macro F1 scores name each class: asked once, above
        want = [named.get(f"f1_{k}", np.nan) for k in range(c)]  # Unitxt names the classes of the references only
        checks[("f1_score", "none")] += 1
        mismatches[("f1_score", "none")] += not np.allclose(per_class, want, rtol=0, atol=TOLERANCE, equal_nan=True)
        for average, reference in (("micro", accuracy_score), ("macro", balanced_accuracy_score)):
            got = ours("accuracy_score", preds, refs, c, labels="references", average=average)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                checks[("accuracy_score", average)] += 1
                mismatches[("accuracy_score", average)] += abs(got - reference(refs, preds)) > TOLERANCE
    print(
        f"seed {seed}: checks {sum(checks.values())}, mismatches {dict((f'{n}/{a}', m) for (n, a), m in mismatches.items())}"
    )
    assert sum(mismatches.values()) == 0
    assert differs > 0  # the option takes effect


@pytest.mark.parametrize(
    ("preds", "refs", "num_classes"),
    [
        ([0, 1, 2, 2], [2, 2, 2, 2], 3),  # one class in the references: micro = macro = its F1
        ([1, 1, 1], [0, 0, 0], 2),  # every prediction wrong: all 0
        ([0, 1, 2, 3], [0, 1, 2, 3], 4),  # perfect
        ([3], [0], 4),  # one example
        ([2, 2, 2, 2], [0, 1, 0, 1], 3),  # a constant prediction outside the references
        ([0, 0, 1, 1, 2, 2], [0, 1, 1, 2, 2, 0], 3),  # ties: every class the same score
    ],
)
def test_edge_cases_equal_unitxt(preds, refs, num_classes):
    for key in UNITXT:
        name, average = key
        got = ours(name, preds, refs, num_classes, labels="references", average=average)
        assert abs(got - main(key, preds, refs)) <= TOLERANCE, key


def test_ignored_references_are_not_references():
    """ignore_index rows count nowhere: the label set and the scores are those of the other rows."""
    preds, refs = np.array([0, 1, 2, 2, 1]), np.array([0, 1, -100, 1, 1])
    keep = refs != -100
    for key in UNITXT:
        name, average = key
        got = ours(name, preds, refs, 3, labels="references", average=average, ignore_index=-100)
        assert abs(got - main(key, preds[keep], refs[keep])) <= TOLERANCE, key


def test_per_token_labels_pool_their_positions():
    rng = np.random.default_rng(3)
    preds, refs = rng.integers(0, 5, size=(20, 7)), rng.integers(0, 3, size=(20, 7))
    for key in UNITXT:
        name, average = key
        got = ours(name, preds, refs, 5, labels="references", average=average)
        assert abs(got - main(key, preds.ravel(), refs.ravel())) <= TOLERANCE, key


@pytest.mark.parametrize("seed", range(4))
def test_each_bootstrap_resample_averages_over_its_own_references(seed):
    """A resample's value is Unitxt's metric recomputed on that resample (its intervals do exactly that): the
    finalizer the intervals use, fed the resample's summed statistics, and the leave-one-out values of BCa."""
    rng = np.random.default_rng(100 + seed)
    preds, refs = rng.integers(0, 6, size=40), rng.choice([0, 1, 2, 5], size=40, p=[0.5, 0.3, 0.15, 0.05])
    checks = mismatches = 0
    for key in UNITXT:
        name, average = key
        metric = get_metric(name, {"task": "multiclass", "num_classes": 6, "labels": "references", "average": average})
        sample = ExampleStats(metric, fields=(preds, refs))
        finalize = sample.finalizer(len(sample))
        for idx in index_chunks(len(refs), 50, seed):
            values = finalize(sample.statistics[idx].sum(axis=1))
            for row, value in zip(idx, values, strict=True):
                checks += 1
                mismatches += abs(value - main(key, preds[row], refs[row])) > TOLERANCE
        stats = sample.statistics.astype(np.int64)
        left_out = metric.finalize_totals(stats.sum(axis=0)[None] - stats)  # what BCa's jackknife reduces
        for drop, value in enumerate(left_out):
            keep = np.arange(len(refs)) != drop
            checks += 1
            mismatches += abs(value - main(key, preds[keep], refs[keep])) > TOLERANCE
        assert set(np.round(jackknife(sample).values, 12)) <= set(np.round(left_out, 12))
        low, high = confidence_interval(sample, metric.compute(preds, refs).value, "bca", 400, 0.95, seed)
        assert 0 <= low <= high <= 1
    print(f"bootstrap seed {seed}: checks {checks}, mismatches {mismatches}")
    assert mismatches == 0


def test_the_option_does_not_change_the_shared_statistics():
    """Statistics do not depend on the label set: F1 of either set and accuracy share one stat-scores pass."""
    config = {"task": "multiclass", "num_classes": 6}
    keys = {
        get_metric(n, {**config, "labels": lab}).shared_key() for n in ("f1_score", "recall") for lab in K.LABEL_SETS
    }
    assert len(keys) == 1
    metric = get_metric("f1_score", {**config, "labels": "references", "average": "macro"})
    assert metric.compute(np.array(PREDS), np.array(REFS)).value == pytest.approx(0.86)


def test_weighted_is_the_same_either_way():
    """Support weights are already 0 outside the references: the option changes micro and macro only."""
    for seed in range(20):
        preds, refs, c = random_labels(np.random.default_rng(seed))
        either = {lab: ours("f1_score", preds, refs, c, labels=lab, average="weighted") for lab in K.LABEL_SETS}
        assert either["observed"] == either["references"]


def test_bad_configs_are_one_clear_error():
    with pytest.raises(ValueError, match="labels 'references' applies to multiclass tasks, not binary"):
        get_metric("f1_score", {"labels": "references", "task": "binary"})
    with pytest.raises(ValueError, match="labels"):
        get_metric("f1_score", {"labels": "predictions"})
    for average in ("micro", "none"):
        with pytest.raises(
            ValueError, match=r"f1_score: labels 'references' .* the task is binary \(set task 'multiclass'"
        ):
            compute_metric("f1_score", np.array([0, 1, 1]), np.array([1, 1, 0]), labels="references", average=average)
    with pytest.raises(ValueError, match="labels must be one of"):
        K.reduce_stat_scores(np.zeros((1, 3, 4)), "f1", "micro", task="multiclass", labels="all")  # type: ignore[arg-type]
