"""The registered speech sub-types (wer, cer, mer, wil, wip, rtfx) against jiwer, kaldialign, Olive's and
jiwer's published vectors, through ``compute_metric`` and the metric objects the engine uses."""

from __future__ import annotations

import random
import re

import jiwer
import kaldialign
import numpy as np
import pytest
import torchmetrics
from rapidfuzz.distance import Levenshtein
from whisper_normalizer.english import EnglishTextNormalizer

from olive_eval import compute_metric
from olive_eval.config import load_run_config
from olive_eval.config.metric import MetricConfig
from olive_eval.engine.passes.scoring import MetricScorer
from olive_eval.errors import ConfigError
from olive_eval.metrics import get_metric, resampling
from olive_eval.metrics import stats as boot_stats
from olive_eval.metrics.resampling import ExampleStats
from olive_eval.metrics.speech import alignment

JIWER = {"wer": jiwer.wer, "cer": jiwer.cer, "mer": jiwer.mer, "wil": jiwer.wil, "wip": jiwer.wip}
WORD_MEASURES = ["wer", "mer", "wil", "wip"]
VOCAB = ["a", "b", "c", "the", "cat", "sat", "on", "mat", "dog", "ran", "x", "y"]


def olive(text: str) -> str:
    """Olive's normalization, written from its description (lowercase, [^\\w\\s] to a space, collapse, strip)."""
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def random_corpus(seed: int, n: int = 60, empty_refs: bool = True) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    refs, preds = [], []
    for _ in range(n):
        ref = [rng.choice(VOCAB) for _ in range(rng.randint(0 if empty_refs else 1, 9))]
        pred = [w if rng.random() < 0.7 else rng.choice(VOCAB) for w in ref if rng.random() < 0.9]
        pred += [rng.choice(VOCAB) for _ in range(rng.randint(0, 2))]
        refs.append(" ".join(ref))
        preds.append(" ".join(pred))
    if empty_refs and not any(refs):
        refs[0] = "a"
    return preds, refs


# ---------------------------------------------------------------------------------------------- published vectors
@pytest.mark.parametrize(
    ("predictions", "references", "config", "expected"),
    [
        (["hello world", "test sentence"], ["hello world", "test sentence"], {}, 0.0),
        (["completely wrong words here"], ["the correct reference text"], {}, 1.0),
        ("hello world", "hello world", {}, 0.0),  # a bare string is one utterance
        (["hello world"], ["hello earth"], {}, 0.5),
        ("Hello, World!", "hello world", {}, 0.0),
        ("Hello, World!", "hello world", {"normalize": False}, 1.0),
        (["the quick fox"], ["the slow fox"], {}, 1 / 3),
        (["a b", "c d e f"], ["a x", "c d e f"], {}, 1 / 6),  # corpus-level, not the mean 0.25
        ("don't stop", "dont stop", {}, 1.0),
        ("naïve", "naive", {}, 1.0),
    ],
)
def test_olive_wer_vectors(predictions, references, config, expected):
    assert compute_metric("wer", predictions, references, **config) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    ("reference", "hypothesis", "expected"),
    [
        ("This is a test", "This test", {"wer": 0.5, "mer": 0.5, "wil": 0.5, "cer": 5 / 14}),
        ("X", "X X Y Y", {"wer": 3, "mer": 0.75, "wil": 0.75, "cer": 6}),
        ("X Y X", "X Z", {"wer": 2 / 3, "mer": 2 / 3, "wil": 5 / 6, "cer": 3 / 5}),
        ("X", "Y Z", {"wer": 2, "mer": 1}),
    ],
)
def test_jiwer_published_vectors(reference, hypothesis, expected):
    for name, value in expected.items():
        ours = compute_metric(name, [hypothesis], [reference], normalizer="none")
        assert ours == pytest.approx(value, abs=1e-12), name
        assert ours == pytest.approx(JIWER[name](reference, hypothesis), abs=1e-12), name


def test_jiwer_empty_reference_vectors():
    preds, refs = ["hello world", "done"], ["hello world", ""]
    assert compute_metric("wer", preds, refs, normalizer="none") == pytest.approx(0.5)
    assert compute_metric("mer", preds, refs, normalizer="none") == pytest.approx(1 / 3)
    assert compute_metric("wil", preds, refs, normalizer="none") == pytest.approx(1 / 3)
    # per utterance, jiwer 4's empty-reference values: wer("", "") = 0, wer("", "x") = 1, 3 words -> 3
    metric = get_metric("wer", {"normalizer": "none"})
    scores = metric.instance_scores(metric.statistics(["", "x", "a b c", "a"], ["", "", "", "a"]))
    assert scores.tolist() == [jiwer.wer("", ""), jiwer.wer("", "x"), jiwer.wer("", "a b c"), 0.0] == [0, 1, 3, 0]


# ---------------------------------------------------------------------------------------------- random corpora
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("name", list(JIWER))
def test_random_corpora_equal_jiwer(seed, name):
    preds, refs = random_corpus(seed)
    assert compute_metric(name, preds, refs, normalizer="none") == pytest.approx(JIWER[name](refs, preds), abs=1e-12)


def whitespace_corpus(seed: int, n: int = 60) -> tuple[list[str], list[str]]:
    """Texts with lone tabs and newlines between words, runs of whitespace, stray whitespace at the ends, case and
    punctuation; some empty or whitespace only."""
    rng = random.Random(seed)
    gaps = [" ", " ", "  ", "\t", "\n", " \t ", "\r\n", "\u00a0"]
    pool = [*VOCAB, "The", "cat,", "sat.", "A"]

    def text() -> str:
        if rng.random() < 0.1:
            return rng.choice(["", " ", "\t\n", "  "])
        words = [rng.choice(pool) for _ in range(rng.randint(1, 8))]
        return rng.choice(["", " ", "\n"]) + "".join(w + rng.choice(gaps) for w in words[:-1]) + words[-1]

    refs = [text() for _ in range(n)]
    refs[0] = "the\tcat sat"
    preds = [text() if rng.random() < 0.5 else r.replace("\t", " ").replace("\n", "  ") for r in refs]
    return preds, refs


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("name", list(JIWER))
def test_none_normalizer_equals_jiwer_on_text_with_tabs_and_newlines(seed, name):
    preds, refs = whitespace_corpus(seed)
    assert compute_metric(name, preds, refs, normalizer="none") == pytest.approx(JIWER[name](refs, preds), abs=1e-12)
    metric = get_metric(name, {"normalizer": "none"})
    expected = [JIWER[name](r, p) for r, p in zip(refs, preds, strict=True)]
    np.testing.assert_allclose(metric.instance_scores(metric.statistics(preds, refs)), expected, atol=1e-12)


def test_none_normalizer_keeps_a_lone_tab_inside_a_word_as_jiwer():
    assert compute_metric("wer", "a b c", "a\tb c", normalizer="none") == 1.0 == jiwer.wer("a\tb c", "a b c")
    assert compute_metric("wer", "a b c", "a\t\tb c", normalizer="none") == 0.0 == jiwer.wer("a\t\tb c", "a b c")
    assert compute_metric("wer", "a b c", "a\tb c", normalize=False) == 0.0  # Olive's raw rule: str.split()


@pytest.mark.parametrize("seed", range(4))
def test_normalize_false_is_olives_raw_string_rule(seed):
    """Olive 0.13 compares raw strings with torchmetrics' WER (words of ``str.split()``, corpus-level), and so does
    Olive's ``normalize: false`` after it: case, punctuation and lone tabs count as they are."""
    preds, refs = whitespace_corpus(seed)
    expected = float(torchmetrics.text.WordErrorRate()(preds, refs))
    assert compute_metric("wer", preds, refs, normalize=False) == pytest.approx(expected, abs=1e-6)  # float32
    assert compute_metric("wer", preds, refs, normalize=False) == pytest.approx(
        sum(Levenshtein.distance(r.split(), p.split()) for r, p in zip(refs, preds, strict=True))
        / sum(len(r.split()) for r in refs),
        abs=1e-12,
    )
    assert compute_metric("wer", "Hello, World!", "hello world", normalize=False) == 1.0


@pytest.mark.parametrize("seed", range(3))
def test_olive_normalizer_equals_jiwer_on_olive_normalized_text(seed):
    preds, refs = random_corpus(seed, empty_refs=False)
    rng = random.Random(seed)
    refs = [r.capitalize() + rng.choice([".", "?", "!", ""]) for r in refs]
    preds = [p.upper() if rng.random() < 0.3 else p.replace(" ", ", ", 1) for p in preds]
    expected = jiwer.wer([olive(r) for r in refs], [olive(p) for p in preds])
    assert compute_metric("wer", preds, refs) == pytest.approx(expected, abs=1e-12)


def test_counts_and_instance_scores_equal_jiwer():
    preds, refs = random_corpus(7)
    metric = get_metric("wer", {"normalizer": "none"})
    stats = metric.statistics(preds, refs)
    score = metric.reduce(stats)
    out = jiwer.process_words(refs, preds)
    assert (score.extra["hits"], score.extra["substitutions"], score.extra["deletions"], score.extra["insertions"]) == (
        out.hits,
        out.substitutions,
        out.deletions,
        out.insertions,
    )
    assert score.details == score.extra and score.extra["utterances"] == len(refs)
    per_utterance = metric.instance_scores(stats)
    np.testing.assert_allclose(per_utterance, [jiwer.wer(r, p) for r, p in zip(refs, preds, strict=True)], atol=1e-12)


@pytest.mark.parametrize("name", [*WORD_MEASURES, "cer"])
def test_bootstrap_totals_equal_jiwer_on_each_resample(name):
    preds, refs = random_corpus(11, empty_refs=False)
    metric = get_metric(name, {"normalizer": "none"})
    stats = metric.statistics(preds, refs)
    rng = np.random.default_rng(0)
    draws = rng.integers(0, len(refs), size=(5, len(refs)))
    values = metric.finalize_totals(np.stack([stats[d].sum(axis=0) for d in draws]))
    expected = [JIWER[name]([refs[i] for i in d], [preds[i] for i in d]) for d in draws]
    np.testing.assert_allclose(values, expected, atol=1e-12)


def measure_of_totals(name: str, totals: np.ndarray) -> np.ndarray:
    """Each measure's definition on summed (H, S, D, I), NaN where there are no reference words."""
    h, s, d, i = totals.T
    n_ref, n_pred = h + s + d, h + s + i
    with np.errstate(invalid="ignore", divide="ignore"):
        wip = np.where(n_pred > 0, (h / n_ref) * (h / n_pred), 0.0)
        value = {"wer": (s + d + i) / n_ref, "cer": (s + d + i) / n_ref, "mer": (s + d + i) / (n_ref + i)}.get(
            name, wip if name == "wip" else 1 - wip
        )
    return np.where(n_ref == 0, np.nan, value)


@pytest.mark.parametrize("name", [*WORD_MEASURES, "cer"])
def test_a_resample_without_reference_words_is_nan_and_left_out_of_the_interval(name):
    """finalize_totals: a resample with no reference words has no value (NaN, not jiwer's per-utterance value,
    which is the insertion count); the interval is the percentile interval of the other resamples' values."""
    preds, refs = ["a b", "x y", "z", "c d e"], ["a b", "", "", "c x e"]
    metric = get_metric(name, {"normalizer": "none"})
    counts = metric.statistics(preds, refs)
    seed, n = 7, 2000
    totals = boot_stats.additive_distribution(counts, lambda t: t, n, seed)  # the same draws, summed
    expected = measure_of_totals(name, totals)
    theta = resampling.distribution(ExampleStats(metric, statistics=counts), n, seed)
    np.testing.assert_array_equal(np.isnan(theta), np.isnan(expected))
    assert 0.05 < np.isnan(theta).mean() < 0.5
    np.testing.assert_allclose(theta, expected, atol=1e-12)  # NaN where expected is NaN
    value = metric.reduce(counts).value
    low, high = resampling.confidence_interval(
        ExampleStats(metric, statistics=counts), value, "percentile", n, 0.95, seed
    )
    finite = expected[~np.isnan(expected)]
    assert (low, high) == pytest.approx(tuple(np.percentile(finite, [2.5, 97.5])), abs=1e-12)
    kept = np.where(np.isnan(expected), metric.instance_scores(totals.astype(np.int64)), expected)
    assert (low, high) != tuple(np.percentile(kept, [2.5, 97.5]))  # the NaN resamples would move it


def test_word_measures_share_one_alignment_per_batch(monkeypatch):
    calls = []
    real = alignment.word_edit_counts
    monkeypatch.setattr(alignment, "word_edit_counts", lambda p, r: calls.append(len(p)) or real(p, r))
    config = MetricConfig.model_validate(
        {"name": "asr", "type": "accuracy", "sub_types": [{"name": n} for n in [*WORD_MEASURES, "cer"]]}
    )
    scorer = MetricScorer(config, None, None, "m")
    preds, refs = random_corpus(3, empty_refs=False)
    scorer.update({"prediction": preds, "references": refs}, 0, {})
    scored = {s.sub.name: s.score.value for s in scorer.finish()}  # the batch is scored as its chunk closes
    assert calls == [len(preds)]
    for name in [*WORD_MEASURES, "cer"]:
        assert scored[name] == pytest.approx(
            JIWER[name]([olive(r) for r in refs], [olive(p) for p in preds]), abs=1e-12
        )


# ---------------------------------------------------------------------------------------------- normalizers
@pytest.mark.parametrize(
    ("prediction", "reference"),
    [
        ("hello", "um hello"),  # fillers dropped
        ("it is done", "it's done"),  # contractions expanded
        ("twenty five apples", "25 apples"),  # spoken numbers to digits
        ("the colour grey", "the color gray"),  # British spellings to American
    ],
)
def test_whisper_english_documented_behaviours(prediction, reference):
    assert compute_metric("wer", [prediction], [reference], normalizer="whisper_english") == 0.0
    assert compute_metric("wer", [prediction], [reference]) > 0.0  # olive's normalizer keeps them apart


def test_leaderboard_mode_equals_kaldialign_with_merged_compounds():
    rng = random.Random(5)
    compounds = [("ice cream", "icecream"), ("white paper", "whitepaper"), ("note book", "notebook")]
    normalizer = EnglishTextNormalizer()
    for _ in range(5):
        preds, refs = random_corpus(rng.randrange(1000), empty_refs=False)
        for i in range(0, len(refs), 4):
            split, joined = rng.choice(compounds)
            refs[i], preds[i] = (f"{refs[i]} {split}", f"{preds[i]} {joined}") if i % 8 else (joined, split)
        refs = [r.capitalize() + "." for r in refs]
        ours = compute_metric("wer", preds, refs, normalizer="open_asr_leaderboard")
        norm_refs = [normalizer(r).split() for r in refs]
        norm_preds = [normalizer(p).split() for p in preds]
        expected = kaldialign.batch_error_rate(norm_refs, norm_preds, merge_compounds=True)
        assert ours == pytest.approx(expected["err_rate"], abs=1e-12)
        assert ours < jiwer.wer([" ".join(r) for r in norm_refs], [" ".join(p) for p in norm_preds])


# ---------------------------------------------------------------------------------------------- rtfx
def rtfx(audio, seconds, batch_index=None, **config):
    batch_index = np.zeros(len(audio), int) if batch_index is None else np.asarray(batch_index)
    return get_metric("rtfx", config).compute(np.asarray(audio), np.asarray(seconds), batch_index)


def test_rtfx_olive_vectors_at_full_precision():
    assert rtfx([10.0], [2.0], warmup_batches=0).value == 5.0
    assert rtfx([5.0], [5.0], warmup_batches=0).value == 1.0
    assert rtfx([10.0], [3.0], warmup_batches=0).value == 10.0 / 3.0  # Olive rounds to 3.33


def test_rtfx_leaves_warmup_batches_out_of_both_sums():
    rng = np.random.default_rng(0)
    audio, seconds = rng.uniform(1, 9, 40), rng.uniform(0.1, 0.5, 40)
    batch = np.repeat(np.arange(10), 4)
    for warmup in (0, 1, 3):
        keep = batch >= warmup
        score = rtfx(audio, seconds, batch, warmup_batches=warmup)
        assert score.value == pytest.approx(audio[keep].sum() / seconds[keep].sum(), rel=1e-12)
        assert score.extra["timed_examples"] == keep.sum()
    assert get_metric("rtfx").config.warmup_batches == 1  # the default


def test_rtfx_with_only_warmup_batches_is_undefined():
    score = rtfx([1.0, 2.0], [0.1, 0.1], [0, 0])
    assert np.isnan(score.value) and "warm-up" in score.undefined


def test_rtfx_through_compute_metric_says_what_it_reads():
    with pytest.raises(ValueError, match="rtfx reads audio_seconds, inference_seconds, batch_index"):
        compute_metric("rtfx", ["a"], ["a"])


# ---------------------------------------------------------------------------------------------- bad input
def test_a_corpus_without_reference_words_is_an_error_not_inf():
    with pytest.raises(ValueError, match="the references hold no words at all"):
        compute_metric("wer", ["a", "b"], ["", " , "])
    with pytest.raises(ValueError, match="no characters at all"):
        compute_metric("cer", ["a"], [""])


def test_predictions_and_references_of_different_lengths():
    with pytest.raises(ValueError, match="wer: 2 predictions and 3 references"):
        compute_metric("wer", ["a", "b"], ["a", "b", "c"])


def test_a_prediction_that_is_not_a_string_names_the_example_and_type():
    metric = get_metric("wer")
    metric.statistics(["a", "b"], ["a", "b"])  # the first batch: examples 0 and 1
    with pytest.raises(TypeError, match=r"the prediction of example 3 is a NoneType, not a str"):
        metric.statistics(["a", None], ["a", "b"])
    with pytest.raises(TypeError, match=r"the reference of example 1 is a float"):
        get_metric("wer").statistics(["a", "b"], ["a", 1.5])


@pytest.mark.parametrize(
    ("sub", "message"),
    [
        (
            {"name": "mer", "metric_config": {"normalizer": "open_asr_leaderboard"}},
            r"sub_types\[0\].metric_config: .*defines only wer",
        ),
        ({"name": "wer", "metric_config": {"normalizer": "kaldi"}}, r"sub_types\[0\].metric_config.normalizer"),
        (
            {"name": "wer", "metric_config": {"normalize": False, "normalizer": "whisper_english"}},
            "normalize: false contradicts normalizer 'whisper_english'",
        ),
        ({"name": "rtfx", "metric_config": {"warmup_batches": -1}}, r"metric_config.warmup_batches"),
    ],
)
def test_bad_metric_config_is_a_config_error_with_its_path(tmp_path, sub, message):
    model = tmp_path / "m.onnx"
    model.write_bytes(b"")
    metric = {"name": "asr", "type": "accuracy", "sub_types": [sub]}
    with pytest.raises(ConfigError, match=message):
        load_run_config({"input_model": {"type": "ONNXModel", "model_path": str(model)}, "metrics": [metric]})


def test_normalize_false_is_the_olive_raw_normalizer_and_true_is_olive():
    assert get_metric("wer", {"normalize": False}).config.normalizer == "olive_raw"
    assert get_metric("wer", {"normalize": False, "normalizer": "none"}).config.normalizer == "none"
    assert get_metric("wer", {"normalize": True}).config.normalizer == "olive"
    assert get_metric("wer").config.normalizer == "olive"
    assert get_metric("wer").higher_is_better is False and get_metric("wip").higher_is_better is True
