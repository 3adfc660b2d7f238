"""Classification scored batch by batch equals scoring the whole set at once, whatever the batch size.

Without ``task`` and ``num_classes`` in metric_config, each batch infers them from its own labels: a batch
holding only labels 0 and 1 looks binary. The pass must still give the whole set's multiclass score.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, f1_score, precision_score

from olive_eval import evaluate

LOADER = "import numpy as np\n\ndef load(model_path):\n    return lambda batch: np.asarray(batch['x'])\n"


@pytest.mark.parametrize("batch_size", [1, 2, 3, 7, 64])
@pytest.mark.parametrize("seed", [0, 1])
def test_streamed_scores_equal_whole_set_scores(tmp_path, batch_size, seed):
    rng = np.random.default_rng(seed)
    n = 40
    labels = rng.integers(0, 4, n)
    labels[:4] = [0, 1, 2, 3]  # every class occurs, so sklearn's macro averages over the same classes
    preds = np.where(rng.random(n) < 0.6, labels, rng.integers(0, 4, n))
    order = np.argsort(labels > 1, kind="stable")  # the low labels first: the first batches look binary
    labels, preds = labels[order], preds[order]
    data = tmp_path / "d.jsonl"
    data.write_text("\n".join(json.dumps({"x": int(p), "label": int(t)}) for p, t in zip(preds, labels, strict=True)))
    (tmp_path / "m.py").write_text(LOADER)
    result = evaluate(
        {
            "input_model": {
                "type": "PythonModel",
                "name": "py",
                "user_script": str(tmp_path / "m.py"),
                "model_loader": "load",
            },
            "data_configs": [
                {
                    "name": "d",
                    "load_dataset_config": {"data_name": "json", "data_files": str(data)},
                    "pre_process_data_config": {"input_cols": ["x"], "label_col": "label"},
                    "dataloader_config": {"batch_size": batch_size},
                }
            ],
            "metrics": [
                {
                    "name": "acc",
                    "type": "accuracy",
                    "sub_types": [
                        {"name": "accuracy_score", "priority": 1},
                        {"name": "f1_score", "metric_config": {"average": "macro"}},
                        {"name": "precision", "metric_config": {"average": "macro"}},
                    ],
                }
            ],
            "output_dir": str(tmp_path / "out"),
        }
    )
    metrics = result.models["py"].metrics
    assert metrics["acc-accuracy_score"].value == pytest.approx(accuracy_score(labels, preds), abs=1e-12)
    assert metrics["acc-f1_score"].value == pytest.approx(f1_score(labels, preds, average="macro"), abs=1e-12)
    expected_precision = precision_score(labels, preds, average="macro", zero_division=0)
    assert metrics["acc-precision"].value == pytest.approx(expected_precision, abs=1e-12)
