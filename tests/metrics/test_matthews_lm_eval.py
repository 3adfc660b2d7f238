"""lm-eval's ``matthews_corrcoef`` (issue 32, seed 001): the seed's ``mcc`` metric is a passthrough of each
document's (gold, pred) pair and its ``matthews_corrcoef`` aggregation computes MCC over all pairs. In olive-eval
the built-in sub-type ``matthews_corrcoef`` scores those pairs (reference, prediction), equal to lm-eval's own
aggregation in the same test on random and edge-case pairs, and in a run; ``"aggregation": "matthews_corrcoef"`` on
a sub-type is a one-line error that names it, since an aggregation sees one score per example, not a pair."""

from __future__ import annotations

import textwrap
import warnings

import numpy as np
import pytest
from lm_eval.api.metrics import matthews_corrcoef as lm_eval_matthews

from olive_eval import evaluate
from olive_eval.config import load_run_config
from olive_eval.errors import ConfigError
from olive_eval.metrics import get_metric
from olive_eval.metrics.aggregations import aggregation_registry, get_aggregation, register_aggregation
from tests.helpers import write_jsonl


def ours(golds: list[int], preds: list[int]) -> float:
    return get_metric("matthews_corrcoef").compute(np.array(preds), np.array(golds)).value


def lm_eval(golds: list[int], preds: list[int]) -> float:
    """lm-eval's aggregation over the items its ``mcc`` passthrough gives: (gold, pred) per document."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn warns when one label is all there is
        return float(lm_eval_matthews(list(zip(golds, preds, strict=True))))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("classes", [2, 4])
def test_equals_lm_evals_aggregation_on_random_pairs(seed, classes):
    rng = np.random.default_rng(seed)
    golds = rng.integers(0, classes, 300)
    preds = np.where(rng.random(300) < 0.6, golds, rng.integers(0, classes, 300))
    np.testing.assert_allclose(
        ours(golds.tolist(), preds.tolist()), lm_eval(golds.tolist(), preds.tolist()), rtol=1e-12
    )


@pytest.mark.parametrize(
    ("golds", "preds"),
    [
        ([0, 1, 0, 1], [1, 1, 1, 1]),  # constant predictions: 0, as scikit-learn defines it
        ([0, 1, 1, 0], [0, 1, 1, 0]),  # perfect
        ([0, 1, 1, 0], [1, 0, 0, 1]),  # inverse
        ([2, 2, 2], [2, 2, 2]),  # one class only
        ([0, 1, 2, 2, 1], [0, 2, 1, 2, 0]),  # multiclass, ties in the margins
        ([1], [0]),  # one document
    ],
)
def test_equals_lm_evals_aggregation_on_edge_cases(golds, preds):
    np.testing.assert_allclose(ours(golds, preds), lm_eval(golds, preds), rtol=1e-12, atol=1e-15)


def run_config(tmp_path, sub: dict) -> dict:
    (tmp_path / "m.py").write_text(
        textwrap.dedent(
            """
            def load(model_path):
                return lambda batch: [(g + (i % 3 == 0)) % 3 for i, g in zip(batch["row"], batch["gold"])]
            """
        )
    )
    rows = [{"row": i, "gold": (i * 7) % 3} for i in range(30)]
    return {
        "input_model": {
            "type": "PythonModel",
            "name": "m",
            "user_script": str(tmp_path / "m.py"),
            "model_loader": "load",
        },
        "data_configs": [
            {
                "name": "d",
                "load_dataset_config": {
                    "data_name": "json",
                    "data_files": str(write_jsonl(tmp_path / "d.jsonl", rows)),
                },
                "pre_process_data_config": {"type": "skip_pre_process", "label_col": "gold"},
                "dataloader_config": {"batch_size": 4},
            }
        ],
        "metrics": [{"name": "mc", "type": "accuracy", "data_config": "d", "sub_types": [sub]}],
        "output_dir": str(tmp_path / "out"),
    }


def test_in_a_run_the_sub_type_is_lm_evals_mcc(tmp_path):
    result = evaluate(run_config(tmp_path, {"name": "matthews_corrcoef"}))
    golds = [(i * 7) % 3 for i in range(30)]
    preds = [(g + (i % 3 == 0)) % 3 for i, g in enumerate(golds)]
    expected = lm_eval(golds, preds)
    assert 0 < expected < 1
    np.testing.assert_allclose(result.models["m"].metrics["mc-matthews_corrcoef"].value, expected, rtol=1e-12)


def test_the_aggregation_by_that_name_is_a_one_line_error_naming_the_sub_type(tmp_path):
    with pytest.raises(ConfigError) as err:
        load_run_config(run_config(tmp_path, {"name": "exact_match", "aggregation": "matthews_corrcoef"}))
    assert err.value.path == "metrics[0].sub_types[0].aggregation"
    assert err.value.message == (
        "aggregation 'matthews_corrcoef' (lm-eval's) takes (gold, pred) pairs, not per-example scores: use the "
        "sub-type 'matthews_corrcoef', which scores each example's reference and prediction"
    )
    assert "matthews_corrcoef" not in aggregation_registry


def test_a_users_own_aggregation_of_that_name_wins():
    @register_aggregation("matthews_corrcoef")
    def signed_mean(scores: np.ndarray) -> float:
        return float(np.mean(2 * scores - 1))

    try:
        assert get_aggregation("matthews_corrcoef")(np.array([1.0, 1.0, 0.0, 1.0])) == 0.5
    finally:
        aggregation_registry.unregister("matthews_corrcoef")
