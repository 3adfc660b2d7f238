"""BLEU, chrF and TER benchmark: olive-eval's ``bleu``, ``chrf`` and ``ter`` sub-types against sacrebleu's own corpus
call, same texts, same run.

The corpus is generated, seeded: 50,000 pairs (issue 34's BLEU row; ``--pairs``) of 8-40 words from 20,000 pseudo-words with Zipf weights,
capitalized here and there; the prediction keeps 70% of its reference's words and is shuffled in 30% of the pairs.
``--refs 2`` gives every example a second reference (a shuffled copy). Timed:

* sacrebleu: ``sacrebleu.corpus_bleu(predictions, streams)``, ``sacrebleu.corpus_chrf(...)`` and
  ``sacrebleu.corpus_ter(...)``;
* ours: the registered sub-type as a prediction pass calls it (``statistics``: type checks, our sentence statistics
  over sacrebleu's tokenizer; then ``reduce``: the sum and our score of it), and through
  ``olive_eval.compute_metric``.

TER (shifts and a beam edit distance, in Python on both sides) is slow: it runs on the first ``--ter-pairs`` pairs.

The values must be identical (the script asserts it; for BLEU also the summed statistics: lengths, matches and
totals equal to sacrebleu's ``BLEUScore``). Each figure is the median of ``--repeat`` runs (wall clock), the timed
runs taking turns. Targets: BLEU ours / sacrebleu <= 0.3 (with the C extension ``_bleu_rows``; the line says whether
it is built), chrF and TER <= 1.05.

Each timed run starts with sacrebleu's 13a tokenizer cache empty (both sides use it).

Run: ``python bench/bench_bleu.py`` (a few minutes on 2 cores), ``--metrics bleu`` for the BLEU row alone,
``--quick`` for a smoke run.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

import sacrebleu
from _models import zipf_word_pairs
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

from olive_eval import compute_metric
from olive_eval.metrics import get_metric
from olive_eval.metrics.text_overlap.bleu_statistics import compiled_available

SEED = 20261124


def make_corpus(n: int, n_refs: int, seed: int = SEED) -> tuple[list[str], list[list[str]]]:
    rng = random.Random(seed)
    preds, refs = [], []
    for pred, ref in zipf_word_pairs(rng, n):
        preds.append(" ".join(pred) + ".")
        others = [rng.sample(ref, len(ref)) for _ in range(n_refs - 1)]
        refs.append([" ".join(r) + "." for r in [ref, *others]])
    return preds, refs


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    Tokenizer13a.__call__.cache_clear()  # both sides tokenize with it: each run starts without the other's lines
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def registered(name: str, preds: list[str], refs: list[list[str]]) -> float:
    metric = get_metric(name)
    return metric.reduce(metric.statistics(preds, refs)).value


def compare(name: str, reference: Callable[..., Any], preds: list[str], refs: list[list[str]], repeat: int) -> None:
    streams = [list(s) for s in zip(*refs, strict=True)]
    runs: dict[str, Callable[[], float]] = {
        "sacrebleu": lambda: reference(preds, streams).score,
        "sub-type": lambda: registered(name, preds, refs),
        "compute_metric": lambda: float(compute_metric(name, preds, refs)),
    }
    times: dict[str, list[float]] = {k: [] for k in runs}
    values: dict[str, float] = {}
    for _ in range(repeat):
        for key, fn in runs.items():
            seconds, values[key] = timed(fn)
            times[key].append(seconds)
    assert values["sub-type"] == values["compute_metric"] == values["sacrebleu"], values
    if name == "bleu":  # the statistics too, not only the score
        theirs = reference(preds, streams)
        ours = get_metric(name).statistics(preds, refs).sum(axis=0).tolist()
        assert ours == [theirs.sys_len, theirs.ref_len, *theirs.counts, *theirs.totals], (ours, theirs)
    base = statistics.median(times["sacrebleu"])
    print(
        f"{name} on {len(preds):,} pairs x {len(refs[0])} refs: sacrebleu {base:.2f} s; "
        f"sub-type / sacrebleu = {statistics.median(times['sub-type']) / base:.3f}, "
        f"compute_metric / sacrebleu = {statistics.median(times['compute_metric']) / base:.3f} "
        f"(value {values['sacrebleu']:.4f} identical)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=50_000)
    parser.add_argument("--refs", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--ter-pairs", type=int, default=1000)
    parser.add_argument("--metrics", default="bleu,chrf,ter", help="comma-separated: which of bleu, chrf, ter to run")
    parser.add_argument("--quick", action="store_true", help="2,000 pairs (TER: 300), one run")
    args = parser.parse_args()
    if args.quick:
        args.pairs, args.ter_pairs, args.repeat = 2000, 300, 1
    preds, refs = make_corpus(args.pairs, args.refs)
    print(f"BLEU's C extension built: {compiled_available()}")
    chosen = args.metrics.split(",")
    if "bleu" in chosen:
        compare("bleu", sacrebleu.corpus_bleu, preds, refs, args.repeat)
    if "chrf" in chosen:
        compare("chrf", sacrebleu.corpus_chrf, preds, refs, args.repeat)
    if "ter" in chosen:
        compare("ter", sacrebleu.corpus_ter, preds[: args.ter_pairs], refs[: args.ter_pairs], args.repeat)


if __name__ == "__main__":
    main()
