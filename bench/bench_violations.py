"""Violation matching benchmark: the ``std_`` and ``ha_`` sub-types against the similarity matrices alone, computed
with ``rapidfuzz.process.cdist`` per document, same data, same run.

Data (generated, seeded): ``--docs`` documents of 600 characters, each with ``--violations`` ground-truth
violations (spans of 5-40 characters; rules drawn from 24 names; categories from 4; explanations and corrections
made of random words) and as many predictions: 70% follow a ground truth (span shifted, rule sometimes re-cased or
misspelt, explanation partly reworded), 30% are random. ``--overlap all`` makes every span cover most of its
document, so that every pair overlaps and no pair is skipped before its similarities (the worst case).

Timed:

* ours: one sub-type per preset as a prediction pass calls it (``statistics`` on the violation dicts: parsing and
  checking them, IoU, similarities, weighted score, greedy matching; then ``reduce``): the other sub-types of the
  preset share these statistics;
* of which, reading and checking the violation dicts alone (``inputs.flatten`` of both sides), shown beside;
* cdist: for each document, ``process.cdist(pred, truth, scorer=fuzz.ratio)`` of each string part the preset
  weighs (std: rules; ha: rules, explanations, corrections), on string lists prepared outside the timing.

Both single-threaded (rapidfuzz's default ``workers=1``). Each figure is the median of ``--repeat`` runs taking
turns. Before timing, the counts of the first 300 documents are checked against a plain loop (cdist matrices and
the seed's sequential greedy). Run: ``python bench/bench_violations.py`` (about a minute on 2 cores), ``--quick``;
``--numpy`` measures the matching's numpy form (what an install without a C compiler runs) instead of _matching.c.
"""

from __future__ import annotations

import argparse
import random
import statistics
import string
import time
from typing import Any

import numpy as np
from rapidfuzz import fuzz, process

from olive_eval.metrics import get_metric
from olive_eval.metrics.violations import native
from olive_eval.metrics.violations.inputs import flatten

SEED = 20261124
RULES = [f"{a} {b}" for a in ("passive", "banned", "spelling", "tone", "wordy", "jargon") for b in
         ("voice", "word", "error", "phrase")]  # fmt: skip
CATEGORIES = ["grammar", "spelling", "terminology", "style"]
PARTS = {"std": ("rule",), "ha": ("rule", "explanation", "correction")}
WEIGHTS = {"std": {"text": 0.5, "rule": 0.5},
           "ha": {"text": 0.3, "rule": 0.3, "category": 0.1, "explanation": 0.2, "correction": 0.1}}  # fmt: skip


def _words(rng: random.Random, n: int) -> str:
    return " ".join("".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 8))) for _ in range(n))


def _span(rng: random.Random, length: int, overlap: str) -> list[int]:
    if overlap == "all":
        start = rng.randint(0, 40)
        return [start, length - rng.randint(0, 40)]
    start = rng.randint(0, length - 41)
    return [start, start + rng.randint(5, 40)]


def _noisy(rng: random.Random, text: str) -> str:
    if rng.random() < 0.3 and text:
        i = rng.randrange(len(text))
        return text[:i] + text[i + 1 :]
    return text.title() if rng.random() < 0.2 else text


def make_data(docs: int, per_doc: int, overlap: str, seed: int = SEED) -> tuple[list, list, list]:
    rng = random.Random(seed)
    texts, preds, refs = [], [], []
    for _ in range(docs):
        text = (_words(rng, 120) + " " * 600)[:600]
        truth = [
            {
                "span": _span(rng, len(text), overlap),
                "rule": rng.choice(RULES),
                "category": rng.choice(CATEGORIES),
                "explanation": _words(rng, rng.randint(4, 10)),
                "correction": _words(rng, rng.randint(1, 3)),
            }
            for _ in range(per_doc)
        ]
        pred = []
        for k in range(per_doc):
            if rng.random() < 0.7:
                g = truth[k]
                s, e = g["span"]
                shift = rng.randint(-4, 4)
                span = [max(0, s + shift), min(len(text), max(s + shift + 1, e + shift))]
                explanation = g["explanation"] if rng.random() < 0.5 else _words(rng, 3) + " " + g["explanation"][:20]
                pred.append({"span": span, "rule": _noisy(rng, g["rule"]), "category": g["category"],
                             "explanation": explanation, "correction": _noisy(rng, g["correction"])})  # fmt: skip
            else:
                pred.append({"span": _span(rng, len(text), overlap), "rule": rng.choice(RULES),
                             "category": rng.choice(CATEGORIES), "explanation": _words(rng, 6),
                             "correction": _words(rng, 2)})  # fmt: skip
        rng.shuffle(pred)
        texts.append(text)
        preds.append(pred)
        refs.append(truth)
    return texts, preds, refs


def ours(preset: str, texts: list, preds: list, refs: list) -> np.ndarray:
    metric = get_metric(f"{preset}_f1")
    stats = metric.statistics(preds, refs, texts)
    metric.reduce(stats)
    return stats


def cdist_only(columns: list[tuple[list[list[str]], list[list[str]]]]) -> list[Any]:
    out = []
    for pred_docs, truth_docs in columns:
        out.append([process.cdist(p, t, scorer=fuzz.ratio) for p, t in zip(pred_docs, truth_docs, strict=True)])
    return out


def plain_loop(preset: str, text: str, pred: list[dict], truth: list[dict]) -> tuple[int, int, int]:
    """The seed's procedure written out for one document: cdist matrices, then the sequential greedy."""
    w = WEIGHTS[preset]
    if not pred or not truth:
        return 0, len(pred), len(truth)
    sims = {part: process.cdist([p[part] for p in pred], [t[part] for t in truth], scorer=fuzz.ratio,
                                dtype=np.float64) / 100 for part in PARTS[preset]}  # fmt: skip
    candidates = []
    for i, p in enumerate(pred):
        for j, t in enumerate(truth):
            (s1, e1), (s2, e2) = p["span"], t["span"]
            inter = max(0, min(e1, e2) - max(s1, s2))
            union = (e1 - s1) + (e2 - s2) - inter
            iou = inter / union if union else 0.0
            parts = {"text": iou, "category": float(p["category"] == t["category"])}
            parts.update({part: sims[part][i, j] for part in PARTS[preset]})
            score = np.array([parts[k] for k in w]) @ np.array(list(w.values()))
            if iou > 0 and parts["rule"] > 0.01 and score > 0.5:
                candidates.append((-score, i, j))
    used_p, used_t = set(), set()
    for _, i, j in sorted(candidates):
        if i not in used_p and j not in used_t:
            used_p.add(i)
            used_t.add(j)
    return len(used_p), len(pred) - len(used_p), len(truth) - len(used_p)


def run(args: argparse.Namespace, overlap: str) -> None:
    texts, preds, refs = make_data(args.docs, args.violations, overlap)
    for preset in ("std", "ha"):
        check = ours(preset, texts[:300], preds[:300], refs[:300])
        expected = [plain_loop(preset, *row) for row in zip(texts[:300], preds[:300], refs[:300], strict=True)]
        assert check[:, :3].astype(int).tolist() == [list(e) for e in expected], "counts differ from the plain loop"
        columns = [([[v[part] for v in doc] for doc in preds], [[v[part] for v in doc] for doc in refs])
                   for part in PARTS[preset]]  # fmt: skip
        times: dict[str, list[float]] = {"ours": [], "cdist": [], "parsing": []}
        needed = [k for k, w in WEIGHTS[preset].items() if w]
        for _ in range(args.repeat):
            start = time.perf_counter()
            stats = ours(preset, texts, preds, refs)
            times["ours"].append(time.perf_counter() - start)
            start = time.perf_counter()
            flatten(preds, texts, "prediction", needed)
            flatten(refs, texts, "reference", needed)
            times["parsing"].append(time.perf_counter() - start)
            start = time.perf_counter()
            cdist_only(columns)
            times["cdist"].append(time.perf_counter() - start)
        a, b = statistics.median(times["ours"]), statistics.median(times["cdist"])
        parsing = statistics.median(times["parsing"])
        tp, fp, fn = stats[:, :3].sum(axis=0).astype(int)
        print(
            f"{preset}_ overlap={overlap:<6} {args.docs} docs x {args.violations}: ours {a * 1e3:8.1f} ms   "
            f"cdist of {len(PARTS[preset])} part(s) {b * 1e3:8.1f} ms   ratio {a / b:5.2f}   "
            f"(of ours, reading the dicts: {parsing * 1e3:.1f} ms = {parsing / b:.2f}x cdist; tp {tp}, fp {fp}, fn {fn})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--violations", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--overlap", choices=("random", "all", "both"), default="both")
    parser.add_argument("--quick", action="store_true", help="1,000 documents, 2 repeats")
    parser.add_argument("--numpy", action="store_true", help="the matching's numpy form, not the C extension")
    args = parser.parse_args()
    if args.numpy:
        native.matching_extension = None
    if args.quick:
        args.docs, args.repeat = 1000, 2
    for overlap in ("random", "all") if args.overlap == "both" else (args.overlap,):
        run(args, overlap)


if __name__ == "__main__":
    main()
