"""Per-example values of global metrics (issue 32, Unitxt's instance scores of global metrics): roc_auc and
average_precision give each example's leave-one-out contribution (value minus the value without it), equal to
scikit-learn recomputed without each example; a registered global function's returned per-example values land in
the instance file; ``process_single_instances: false`` writes neither."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score

from olive_eval import evaluate
from olive_eval.errors import EvaluationError
from olive_eval.metrics.classification.leave_one_out import (
    loo_average_precision,
    loo_roc_auc,
    per_class_leave_one_out,
)
from olive_eval.metrics.registry import metric_registry
from olive_eval.records.parquet import read_records
from tests.helpers import python_model_run, write_jsonl


def sk_roc(y: np.ndarray, s: np.ndarray) -> float:
    return float(roc_auc_score(y, s)) if len(np.unique(y)) == 2 else np.nan


def sk_ap(y: np.ndarray, s: np.ndarray) -> float:
    return float(average_precision_score(y, s)) if y.sum() > 0 else np.nan


def recomputed(reference, y: np.ndarray, s: np.ndarray) -> np.ndarray:
    """The reference over the set without each example: n recomputations, the test's independent loop."""
    keep = ~np.eye(len(y), dtype=bool)
    return np.array([reference(y[k], s[k]) for k in keep])


@pytest.mark.parametrize("seed", range(12))
def test_binary_leave_one_out_equals_scikit_learn_without_each_example_with_ties(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 40))
    s = rng.integers(0, 5, n).astype(float) / 4  # few distinct scores: many ties
    y = (rng.random(n) < rng.uniform(0.1, 0.9)).astype(int)
    np.testing.assert_allclose(loo_roc_auc(s, y == 1), recomputed(sk_roc, y, s), rtol=1e-12, equal_nan=True)
    np.testing.assert_allclose(loo_average_precision(s, y == 1), recomputed(sk_ap, y, s), rtol=1e-12, equal_nan=True)


def test_continuous_scores_and_edge_cases():
    rng = np.random.default_rng(7)
    s, y = rng.random(60), rng.integers(0, 2, 60)
    np.testing.assert_allclose(loo_roc_auc(s, y == 1), recomputed(sk_roc, y, s), rtol=1e-12)
    np.testing.assert_allclose(loo_average_precision(s, y == 1), recomputed(sk_ap, y, s), rtol=1e-12)
    # one positive: leaving it out leaves no positive (undefined); the rest equal scikit-learn
    y1 = np.zeros(8, dtype=int)
    y1[3] = 1
    s1 = np.array([0.5, 0.5, 0.1, 0.5, 0.9, 0.2, 0.5, 0.0])
    for kernel, reference in ((loo_roc_auc, sk_roc), (loo_average_precision, sk_ap)):
        got = kernel(s1, y1 == 1)
        assert np.isnan(got[3])
        np.testing.assert_allclose(got, recomputed(reference, y1, s1), rtol=1e-12, equal_nan=True)
    # one class only, constant scores, empty
    assert np.isnan(loo_roc_auc(np.ones(5), np.ones(5, dtype=bool))).all()
    assert np.isnan(loo_average_precision(np.ones(5), np.zeros(5, dtype=bool))).all()
    const = np.ones(6)
    y2 = np.array([0, 1, 0, 1, 1, 0])
    np.testing.assert_allclose(loo_roc_auc(const, y2 == 1), recomputed(sk_roc, y2, const))
    np.testing.assert_allclose(loo_average_precision(const, y2 == 1), recomputed(sk_ap, y2, const))
    assert loo_roc_auc(np.empty(0), np.empty(0, dtype=bool)).shape == (0,)
    assert loo_average_precision(np.empty(0), np.empty(0, dtype=bool)).shape == (0,)


@pytest.mark.parametrize("kernel", ["roc_auc", "average_precision"])
def test_multiclass_macro_leave_one_out_equals_scikit_learn_per_class_mean(kernel):
    rng = np.random.default_rng(3)
    n, c = 30, 4
    s = rng.integers(0, 4, (n, c)).astype(float)
    y = rng.integers(0, c, n)
    y[y == 3] = 2  # class 3 has no positives: left out of the mean, as the metric's value leaves it out
    reference = sk_roc if kernel == "roc_auc" else sk_ap
    expected = []
    for i in range(n):
        keep = np.arange(n) != i
        per_class = [reference((y[keep] == k).astype(int), s[keep, k]) for k in range(c)]
        expected.append(np.nanmean(per_class))
    np.testing.assert_allclose(per_class_leave_one_out(s, y, kernel), expected, rtol=1e-12)


MODELS = textwrap.dedent(
    """
    import numpy as np


    def load(model_path):
        return lambda batch: [round(float(v), 1) for v in np.asarray(batch["x"], dtype=float)]
    """
)

REGISTERED = textwrap.dedent(
    """
    import numpy as np
    from olive_eval import register_metric


    @register_metric(name="{name}", higher_is_better=True, kind="global")
    def spread(predictions, references, width: int = 0):
        p = np.asarray(predictions, dtype=float)
        per_example = np.abs(p - np.asarray(references, dtype=float))
        return float(per_example.mean()), per_example[: len(p) - width]
    """
)


@pytest.fixture
def run(tmp_path, request):
    name = "spread_" + request.node.name.split("[")[0][-20:]
    rng = np.random.default_rng(11)
    x, target = rng.random(50), rng.integers(0, 2, 50)
    write_jsonl(tmp_path / "d.jsonl", [{"x": float(a), "target": int(t)} for a, t in zip(x, target, strict=True)])
    (tmp_path / "models.py").write_text(MODELS)
    (tmp_path / "loaded").write_text("")
    (tmp_path / "metrics.py").write_text(REGISTERED.format(name=name))
    yield tmp_path, name, np.round(x, 1), target
    if name in metric_registry:
        metric_registry.unregister(name)


def config_for(folder, name: str, **extra) -> dict:
    subs = [{"name": "roc_auc", "priority": 1}, {"name": "average_precision"}, {"name": name}]
    metric = {"name": "g", "sub_types": subs, "user_config": {"user_script": str(folder / "metrics.py")}, **extra}
    return python_model_run(folder, metric, batch_size=8)


def records(folder) -> list[dict]:
    return list(read_records(folder / "out" / "instances" / "m" / "g.parquet"))


def test_per_example_values_of_global_metrics_land_in_the_instance_file(run):
    folder, name, s, y = run
    result = evaluate(config_for(folder, name))
    metrics = result.models["m"].metrics
    assert metrics["g-roc_auc"].value == pytest.approx(roc_auc_score(y, s))
    rows = records(folder)
    assert [r["index"] for r in rows] == list(range(50))
    full_roc, full_ap = roc_auc_score(y, s), average_precision_score(y, s)
    np.testing.assert_allclose([r["roc_auc"] for r in rows], full_roc - recomputed(sk_roc, y, s), atol=1e-12)
    np.testing.assert_allclose([r["average_precision"] for r in rows], full_ap - recomputed(sk_ap, y, s), atol=1e-12)
    np.testing.assert_allclose([r[name] for r in rows], np.abs(s - y))
    assert metrics[f"g-{name}"].value == pytest.approx(np.abs(s - y).mean())


def test_process_single_instances_false_writes_no_per_example_values(run):
    folder, name, s, y = run
    result = evaluate(config_for(folder, name, process_single_instances=False))
    assert result.models["m"].metrics["g-roc_auc"].value == pytest.approx(roc_auc_score(y, s))
    rows = records(folder)
    assert len(rows) == 50 and "prediction" in rows[0]
    assert not {"roc_auc", "average_precision", name} & set(rows[0])


def test_per_example_values_of_the_wrong_length_are_a_one_line_error(run):
    folder, name, _, _ = run
    evaluate(config_for(folder, name))  # registers the user's metric
    metric = metric_registry.get(name).from_config({"width": 2})
    with pytest.raises(
        EvaluationError,
        match=rf"^metric '{name}' returned per-example values of shape \[3\] for 5 examples; expected \[5\]$",
    ):
        metric.compute(np.zeros(5), np.zeros(5))
