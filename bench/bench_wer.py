"""WER benchmark: olive-eval's speech kernels against a direct ``jiwer.wer`` call, same strings, same run.

Corpora are generated, seeded: reference sentences drawn from a fixed vocabulary of pseudo-words,
capitalized and punctuated; each prediction is its reference with random word edits (substitutions,
deletions, insertions: 0-4 per pair in the short corpus, 0-10 % of the words in the long one), lower
case and unpunctuated half the time, so the normalization matters.

* short   100,000 pairs of 5-25 words (target ours / jiwer <= 0.2)
* long    5,000 pairs of about 200 words (190-210)

Timed for olive-eval: the registered ``wer`` sub-type as a prediction pass calls it (``statistics``: type checks,
Olive's normalization of both sides, per-utterance counts; then ``reduce``: the corpus sums), and beside it the
kernels alone (``normalize_texts``, ``word_edit_counts``, ``wer``). Two jiwer timings:

* ``jiwer.wer(refs, preds)`` on the already-normalized strings: jiwer's normalization is not timed,
  ours is. This is the ratio the target is about.
* ``jiwer.wer`` on the raw strings with an equivalent transform (lowercase, ``[^\\w\\s]`` to a space,
  collapse spaces, strip, split), equivalent here because the generated texts hold no tabs or newlines.

and, for information, ``jiwer.wer`` on the normalized strings with Python's garbage collector paused:
jiwer's time per pair grows with the corpus because the collector rescans its growing alignment
objects, so most of the gap between 10,000 and 100,000 pairs is that.

Each figure is the median of ``--repeat`` runs after one untimed warm-up run, the timed runs taking turns
(wall-clock and process CPU time, the latter less sensitive to other work on a shared machine). The WER
values must be equal to 1e-12 (the script asserts it and prints the largest difference).

Run: ``python bench/bench_wer.py`` (about a minute on 2 cores), ``--quick`` for a smoke run.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

import jiwer

from olive_eval.metrics import get_metric
from olive_eval.metrics.speech.alignment import wer, word_edit_counts
from olive_eval.metrics.speech.normalize import normalize_texts

SEED = 20240601
SYLLABLES = ["ka", "lo", "mi", "ren", "tu", "sa", "vo", "ni", "pel", "dra", "os", "qui", "ze", "ban", "it", "u"]
N_VOCAB = 5000

JIWER_OLIVE_TRANSFORM = jiwer.Compose(
    [
        jiwer.ToLowerCase(),
        jiwer.SubstituteRegexes({r"[^\w\s]": " "}),
        jiwer.RemoveMultipleSpaces(),
        jiwer.Strip(),
        jiwer.ReduceToListOfListOfWords(),
    ]
)


def make_vocab(rng: random.Random) -> list[str]:
    words: set[str] = set()
    while len(words) < N_VOCAB:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 4))))
    return sorted(words)


def make_corpus(
    n_pairs: int, min_words: int, max_words: int, edit_rate: float | None, seed: int
) -> tuple[list[str], list[str]]:
    """``(predictions, references)``; ``edit_rate`` None means 0-4 edits per pair, else that share of words."""
    rng = random.Random(seed)
    vocab = make_vocab(rng)
    preds, refs = [], []
    for _ in range(n_pairs):
        words = rng.choices(vocab, k=rng.randint(min_words, max_words))
        hyp = list(words)
        n_edits = rng.randint(0, 4) if edit_rate is None else round(edit_rate * len(words) * rng.random() * 2)
        for _ in range(n_edits):
            op = rng.random()
            if op < 0.5 and hyp:
                hyp[rng.randrange(len(hyp))] = rng.choice(vocab)
            elif op < 0.75 and hyp:
                del hyp[rng.randrange(len(hyp))]
            else:
                hyp.insert(rng.randint(0, len(hyp)), rng.choice(vocab))
        if len(words) > 3:
            words[len(words) // 2] += ","
        refs.append(words[0].capitalize() + " " + " ".join(words[1:]) + rng.choice([".", "?", "!"]))
        pred = " ".join(hyp)
        preds.append(pred.capitalize() + "." if rng.random() < 0.5 else pred)
    return preds, refs


def timed(funcs: dict[str, Callable[[], Any]], repeat: int) -> dict[str, tuple[float, float, Any]]:
    """Per function: median wall and CPU seconds of ``repeat`` calls, and the last result.

    One untimed warm-up call each, then the functions take turns, round after round, so that a change
    of load on a shared machine falls on all of them alike.
    """
    results = {name: func() for name, func in funcs.items()}
    wall: dict[str, list[float]] = {name: [] for name in funcs}
    cpu: dict[str, list[float]] = {name: [] for name in funcs}
    for _ in range(repeat):
        for name, func in funcs.items():
            start_wall, start_cpu = time.perf_counter(), time.process_time()
            results[name] = func()
            wall[name].append(time.perf_counter() - start_wall)
            cpu[name].append(time.process_time() - start_cpu)
    return {name: (statistics.median(wall[name]), statistics.median(cpu[name]), results[name]) for name in funcs}


def without_gc(func: Callable[[], Any]) -> Any:
    """``func()`` with Python's cyclic garbage collector paused (shows how much of jiwer's time it costs)."""
    gc.disable()
    try:
        return func()
    finally:
        gc.enable()


def ours(preds: list[str], refs: list[str]) -> float:
    """The registered ``wer`` sub-type as a pass uses it: per-utterance statistics (type checks, Olive's
    normalization, counts), then the corpus reduce."""
    metric = get_metric("wer")
    return metric.reduce(metric.statistics(preds, refs)).value


def ours_kernels(preds: list[str], refs: list[str]) -> float:
    norm_preds = normalize_texts(preds, "olive", what="prediction")
    norm_refs = normalize_texts(refs, "olive", what="reference")
    return wer(word_edit_counts(norm_preds, norm_refs).sum(axis=0))


def bench(label: str, preds: list[str], refs: list[str], repeat: int) -> tuple[float, float]:
    n_words = sum(len(r.split()) for r in refs)
    print(f"== {label}: {len(refs):,} pairs, {n_words / len(refs):.1f} reference words per pair on average")
    norm_preds, norm_refs = normalize_texts(preds), normalize_texts(refs)
    runs = timed(
        {
            "ours: registered wer (normalization incl.)": lambda: ours(preds, refs),
            "  kernels alone (normalize + counts + wer)": lambda: ours_kernels(preds, refs),
            "  of which normalization of both sides": lambda: (normalize_texts(preds), normalize_texts(refs)),
            "  of which word_edit_counts": lambda: word_edit_counts(norm_preds, norm_refs),
            "jiwer.wer on pre-normalized strings": lambda: jiwer.wer(norm_refs, norm_preds),
            "jiwer.wer with the equivalent transform": lambda: jiwer.wer(
                refs, preds, reference_transform=JIWER_OLIVE_TRANSFORM, hypothesis_transform=JIWER_OLIVE_TRANSFORM
            ),
            "jiwer.wer on pre-normalized, collector off": lambda: without_gc(lambda: jiwer.wer(norm_refs, norm_preds)),
        },
        repeat,
    )
    names = list(runs)
    v_ours, v_jiwer, v_jiwer_tr = runs[names[0]][2], runs[names[4]][2], runs[names[5]][2]
    assert runs[names[1]][2] == v_ours
    diff = max(abs(v_ours - v_jiwer), abs(v_ours - v_jiwer_tr))
    assert diff <= 1e-12, f"WER differs: ours {v_ours!r}, jiwer {v_jiwer!r}, jiwer with transform {v_jiwer_tr!r}"
    print(f"  WER ours {v_ours:.17g}  jiwer {v_jiwer:.17g}  jiwer+transform {v_jiwer_tr:.17g}  max |diff| {diff:.3g}")
    print(f"  {'':43s} {'wall s':>8s} {'cpu s':>8s}   ratio ours/jiwer (wall, cpu)")
    ours_wall, ours_cpu, _ = runs[names[0]]
    for name, (t_wall, t_cpu, _) in runs.items():
        ratio = f"   {ours_wall / t_wall:.3f}, {ours_cpu / t_cpu:.3f}" if name.startswith("jiwer") else ""
        print(f"  {name:43s} {t_wall:8.3f} {t_cpu:8.3f}{ratio}")
    t_wall, t_cpu, _ = runs[names[4]]
    print(f"  ours / jiwer.wer on pre-normalized strings: {ours_wall / t_wall:.3f} wall, {ours_cpu / t_cpu:.3f} cpu")
    return ours_wall / t_wall, ours_cpu / t_cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=100_000, help="short pairs (5-25 words)")
    parser.add_argument("--long-pairs", type=int, default=5_000, help="long pairs (about 200 words)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per figure (median)")
    parser.add_argument("--quick", action="store_true", help="10,000 short and 500 long pairs, 1 repeat")
    args = parser.parse_args()
    if args.quick:
        args.pairs, args.long_pairs, args.repeat = 10_000, 500, 1
    print(f"timing: median of {args.repeat} run(s) after a warm-up run; normalization timed for ours only\n")
    short = bench("short utterances", *make_corpus(args.pairs, 5, 25, None, SEED), args.repeat)
    print()
    long = bench("long utterances", *make_corpus(args.long_pairs, 190, 210, 0.05, SEED + 1), args.repeat)
    print("\n== summary: ours / jiwer.wer (pre-normalized strings), wall and cpu; target <= 0.2 on short utterances")
    print(f"  short ({args.pairs:,} pairs of 5-25 words): {short[0]:.3f} wall, {short[1]:.3f} cpu")
    print(f"  long  ({args.long_pairs:,} pairs of ~200 words): {long[0]:.3f} wall, {long[1]:.3f} cpu")


if __name__ == "__main__":
    main()
