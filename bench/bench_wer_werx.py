"""WER against werx (Rust, the fastest WER on PyPI): the registered ``wer`` sub-type with ``normalizer: "none"``
beside ``werx.wer``, same strings, same process, interleaved.

Rows (issue 34):

* short: 100,000 pairs of 3-12 words (target ours / werx <= 1.0)
* long: 10,000 pairs of 50-120 words (target ours / werx <= 0.7)

The corpus: words drawn from 5,000 pseudo-words, each prediction its reference with 0-4 random word edits
(substitutions, deletions, insertions; the long pairs 0-10 % of their words), single spaces only, so werx's
whitespace split and jiwer's words agree. Timed for ours: ``get_metric("wer", {"normalizer": "none"})``'s
``statistics`` (type checks, the per-utterance counts) and ``reduce`` (the corpus sum), as a prediction pass calls
them; and ``word_edit_counts`` alone. Our C kernel counts on one thread per core (up to 4, 5,000 pairs a thread),
as werx does (rayon); both wall and process CPU seconds are printed, since on a loaded machine werx's threads wait. The WER must equal werx's and jiwer's with ``==`` and the counts
(H, S, D, I) must equal jiwer's (``jiwer.process_words``, untimed); the script asserts both.

Each figure is the median of ``--repeat`` interleaved runs after one warm-up run. Run:
``python bench/bench_wer_werx.py`` (about 10 s), ``--quick`` for a smoke run. Print ``uptime`` beside it.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

import jiwer
import numpy as np
import werx

from olive_eval.metrics import get_metric
from olive_eval.metrics.speech.alignment import compiled_available, wer, word_edit_counts
from olive_eval.metrics.speech.native import kernel_threads

SEED = 20261201
SYLLABLES = ["ka", "lo", "mi", "ren", "tu", "sa", "vo", "ni", "pel", "dra", "os", "qui", "ze", "ban", "it", "u"]


def make_corpus(n: int, lo: int, hi: int, edit_rate: float | None, seed: int) -> tuple[list[str], list[str]]:
    """``(predictions, references)``; ``edit_rate`` None: 0-4 edits per pair, else about that share of words."""
    rng = random.Random(seed)
    vocab: set[str] = set()
    while len(vocab) < 5000:
        vocab.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 4))))
    words_of = sorted(vocab)
    preds, refs = [], []
    for _ in range(n):
        words = rng.choices(words_of, k=rng.randint(lo, hi))
        hyp = list(words)
        edits = rng.randint(0, 4) if edit_rate is None else round(edit_rate * len(words) * rng.random() * 2)
        for _ in range(edits):
            op = rng.random()
            if op < 0.5 and hyp:
                hyp[rng.randrange(len(hyp))] = rng.choice(words_of)
            elif op < 0.75 and hyp:
                del hyp[rng.randrange(len(hyp))]
            else:
                hyp.insert(rng.randint(0, len(hyp)), rng.choice(words_of))
        refs.append(" ".join(words))
        preds.append(" ".join(hyp))
    return preds, refs


def registered(preds: list[str], refs: list[str]) -> float:
    metric = get_metric("wer", {"normalizer": "none"})
    return metric.reduce(metric.statistics(preds, refs)).value


def timed(funcs: dict[str, Callable[[], Any]], repeat: int) -> dict[str, tuple[float, float, Any]]:
    """Median wall and process CPU seconds of ``repeat`` interleaved calls of each, after one warm-up call; and the
    last result."""
    results = {name: func() for name, func in funcs.items()}
    wall: dict[str, list[float]] = {name: [] for name in funcs}
    cpu: dict[str, list[float]] = {name: [] for name in funcs}
    for _ in range(repeat):
        for name, func in funcs.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            results[name] = func()
            wall[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - start_cpu)
    return {name: (statistics.median(wall[name]), statistics.median(cpu[name]), results[name]) for name in funcs}


def bench(label: str, preds: list[str], refs: list[str], repeat: int, target: float) -> float:
    runs = timed(
        {
            "werx.wer": lambda: werx.wer(refs, preds),
            "ours: registered wer, normalizer none": lambda: registered(preds, refs),
            "ours: word_edit_counts + wer": lambda: wer(word_edit_counts(preds, refs).sum(axis=0)),
        },
        repeat,
    )
    out = jiwer.process_words(refs, preds)
    expected = [out.hits, out.substitutions, out.deletions, out.insertions]
    counts = word_edit_counts(preds, refs).sum(axis=0).tolist()
    assert counts == expected, f"counts {counts} != jiwer's {expected}"
    values = {name: value for name, (_, _, value) in runs.items()}
    assert len(set(values.values()) | {out.wer}) == 1, f"WER differs: {values}, jiwer {out.wer!r}"
    base, base_cpu, _ = runs["werx.wer"]
    print(f"== {label}: {len(refs):,} pairs; WER {out.wer:.17g} identical (werx, jiwer, ours; counts = jiwer's)")
    print(f"  {'':40s} {'wall s':>8s} {'cpu s':>8s}   / werx (wall, cpu)")
    for name, (seconds, cpu, _) in runs.items():
        print(f"  {name:40s} {seconds:8.4f} {cpu:8.4f}   {seconds / base:6.3f}, {cpu / base_cpu:6.3f}")
    ours, ours_cpu, _ = runs["ours: registered wer, normalizer none"]
    print(f"  ours / werx = {ours / base:.3f} wall, {ours_cpu / base_cpu:.3f} cpu (target <= {target})")
    return ours / base


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument("--long-pairs", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="10,000 short and 1,000 long pairs, one run")
    args = parser.parse_args()
    if args.quick:
        args.pairs, args.long_pairs, args.repeat = 10_000, 1_000, 1
    print(
        f"C extension built: {compiled_available()} (threads: {kernel_threads(args.pairs)} short, "
        f"{kernel_threads(args.long_pairs)} long); werx {werx.__version__}; numpy {np.__version__}"
    )
    short = bench("short (3-12 words)", *make_corpus(args.pairs, 3, 12, None, SEED), args.repeat, 1.0)
    long = bench("long (50-120 words)", *make_corpus(args.long_pairs, 50, 120, 0.05, SEED + 1), args.repeat, 0.7)
    print(f"\nsummary ours / werx: short {short:.3f} (target <= 1.0), long {long:.3f} (target <= 0.7)")


if __name__ == "__main__":
    main()
