"""Fidelity on the post-process's result (``compare: "prediction"``): an embedding model's fidelity is that of its
pooled sentence embeddings, not of the token states they came from. Here a softmax post-process stands for it, so
the two sources give different values, each equal to scipy's softmax and scikit-learn's measures of the same
outputs; a config that names both sources, or an unknown one, is refused before any model loads."""

from __future__ import annotations

import numpy as np
import pyarrow.ipc as ipc
import pytest
from scipy.special import softmax
from sklearn.metrics import mean_squared_error
from sklearn.metrics.pairwise import cosine_similarity

from olive_eval import evaluate
from olive_eval.errors import ConfigError
from tests.helpers import N_CLASSES, N_FEATURES, linear_onnx, write_jsonl


class Softmaxed:
    """A linear baseline and a noisy candidate whose predictions are the softmax of their logits."""

    def __init__(self, root, n: int = 50) -> None:
        rng = np.random.default_rng(11)
        self.root = root
        self.x = rng.standard_normal((n, N_FEATURES)).astype(np.float32).round(4)
        base = rng.standard_normal((N_FEATURES, N_CLASSES)).astype(np.float32)
        self.weights = {"base": base, "cand": base + 0.5 * rng.standard_normal(base.shape).astype(np.float32)}
        self.data = write_jsonl(root / "d.jsonl", [{"x": row.tolist()} for row in self.x])

    def model(self, name: str) -> dict:
        return {
            "type": "ONNXModel",
            "name": name,
            "model_path": str(linear_onnx(self.root / f"{name}.onnx", self.weights[name])),
        }

    def config(self, sub_types: list[dict]) -> dict:
        return {
            "input_model": self.model("base"),
            "candidates": [self.model("cand")],
            "data_configs": [
                {
                    "name": "d",
                    "load_dataset_config": {"data_name": "json", "data_files": str(self.data)},
                    "pre_process_data_config": {"input_cols": ["x"]},
                    "post_process_data_config": {"type": "softmax"},
                    "dataloader_config": {"batch_size": 7},
                }
            ],
            "metrics": [{"name": "fid", "type": "fidelity", "sub_types": sub_types}],
            "output_dir": str(self.root / "out"),
        }

    def logits(self, name: str) -> np.ndarray:
        return (self.x @ self.weights[name]).astype(np.float64)


def value(result, metric: str) -> float:
    return result.models["cand"].metrics[metric].value


def test_compare_prediction_scores_the_post_processed_outputs_and_the_default_the_raw_ones(tmp_path):
    problem = Softmaxed(tmp_path)
    logits_c, logits_b = problem.logits("cand"), problem.logits("base")
    probs_c, probs_b = softmax(logits_c, axis=1), softmax(logits_b, axis=1)

    on_predictions = evaluate(
        problem.config(
            [
                {"name": "cosine_similarity", "priority": 1, "metric_config": {"compare": "prediction"}},
                {"name": "output_mse", "metric_config": {"compare": "prediction"}},
            ]
        )
    )
    assert value(on_predictions, "fid-cosine_similarity") == pytest.approx(
        np.diag(cosine_similarity(probs_c, probs_b)).mean(), rel=1e-6
    )
    assert value(on_predictions, "fid-output_mse") == pytest.approx(mean_squared_error(probs_b, probs_c), rel=1e-5)
    kept = next((tmp_path / "out/outputs/base").rglob("*.arrow"))
    # the baseline's predictions (and their shape), kept from its pass
    assert {name.split("#")[0] for name in ipc.open_file(kept).schema.names} == {"prediction"}

    on_outputs = evaluate(
        problem.config(
            [
                {"name": "cosine_similarity", "priority": 1, "metric_config": {"compare": "output"}},
                {"name": "output_mse"},  # the default: the raw output
            ]
        )
    )
    assert value(on_outputs, "fid-cosine_similarity") == pytest.approx(
        np.diag(cosine_similarity(logits_c, logits_b)).mean(), rel=1e-6
    )
    assert value(on_outputs, "fid-output_mse") == pytest.approx(mean_squared_error(logits_b, logits_c), rel=1e-5)
    assert abs(value(on_outputs, "fid-output_mse") - value(on_predictions, "fid-output_mse")) > 0.1


def test_the_baseline_compared_on_its_predictions_is_the_identity(tmp_path):
    result = evaluate(
        Softmaxed(tmp_path).config([{"name": "cosine_similarity", "metric_config": {"compare": "prediction"}}])
    )
    assert result.models["base"].metrics["fid-cosine_similarity"].value == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize(
    ("metric_config", "message"),
    [
        ({"compare": "prediction", "output_name": "logits"}, "output_name picks a raw model output"),
        ({"compare": "predictions"}, "'output' or 'prediction'"),
    ],
)
def test_a_second_source_or_an_unknown_one_is_refused_at_the_config(tmp_path, metric_config, message):
    with pytest.raises(ConfigError) as caught:
        evaluate(Softmaxed(tmp_path).config([{"name": "cosine_similarity", "metric_config": metric_config}]))
    text = str(caught.value)
    assert message in text and "metrics[0].sub_types[0].metric_config" in text and "\n" not in text
    assert not (tmp_path / "out").exists()
